// What `npm run local-up` takes on its command line, shared by up.ts and the supervisor, and how
// both describe the simulation that `--simulate` adds.

export const USAGE = [
  'usage: npm run local-up [-- --simulate]',
  '',
  "  (no option)   a real control plane with KubeCell's API, hook server, admission webhook,",
  '                Metacontroller and controllers; nothing plays the world around it',
  '  --simulate    also run the SIMULATED outside world of test/simulate/ (OCM, kubelets, k3k,',
  '                KubeVirt, Cluster API), so that `kubectl apply -f samples/` becomes Ready',
  '  -h, --help    this text',
].join('\n');

export interface UpOptions {
  simulate: boolean;
}

/** The options of `local-up`, `'help'`, or an error message for arguments it does not take. */
export function parseUpArguments(args: readonly string[]): UpOptions | 'help' | { error: string } {
  const options: UpOptions = { simulate: false };
  for (const arg of args) {
    if (arg === '--simulate') options.simulate = true;
    else if (arg === '-h' || arg === '--help') return 'help';
    else return { error: `unknown argument: ${arg}` };
  }
  return options;
}

/** Simulated Nodes per Cell machine profile (test/simulate's profileNodes.perProfile). */
export const SIMULATED_NODES_PER_PROFILE = 2;

/** What the simulation plays, for the summary (up.ts) and the supervisor's log. */
export const SIMULATED_LINES = [
  'SIMULATED (--simulate): test/simulate/, the same code the cluster tests use, plays the world',
  'around KubeCell, writing through the API what the real components would write:',
  "  - Open Cluster Management: every Cell's ManagedCluster joins and its lease is renewed;",
  `  - kubelets: ${SIMULATED_NODES_PER_PROFILE} Ready Nodes per Cell machine profile (sim-<profile>-<n>), offering the`,
  "    Cell's devices and TopoLVM capacity; the k3k controller Deployment and the CNI and",
  '    TopoLVM DaemonSets are reported available;',
  '  - k3k: every k3k Cluster reports Ready and gets an admin kubeconfig Secret;',
  '  - KubeVirt and Cluster API: every GPUCellPool VirtualMachine or Machine reports Running',
  "    and its cell's Node joins.",
  'Nothing real runs behind them: no Pod ever starts, no VM boots, and the kubeconfigs of',
  'VirtualClusters point nowhere (fake certificates, no server). KubeCell itself is real: its',
  'status comes from Metacontroller calling the hooks.',
];
