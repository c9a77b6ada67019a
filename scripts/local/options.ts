// What `npm run local-up` takes on its command line, shared by up.ts and the supervisor, and how
// both describe the simulation that `--simulate` adds and the second cluster `--remote` adds.
import { REMOTE_CLUSTER } from '../../harness/remote-world.js';
import { DEFAULT_LEASE_DURATION_SECONDS } from '../../harness/simulate/ocm.js';

export const USAGE = [
  'usage: npm run local-up [-- --simulate [--remote]]',
  '',
  "  (no option)   a real control plane with KubeCell's API, hook server, admission webhook,",
  '                Metacontroller and controllers; nothing plays the world around it',
  '  --simulate    also run the SIMULATED outside world of harness/simulate/ (OCM, kubelets, k3k,',
  '                KubeVirt, Cluster API), so that `kubectl apply -f samples/` becomes Ready',
  '  --remote      with --simulate: also run the REAL Open Cluster Management hub on that cluster',
  '                and a second control plane joined to it as ManagedCluster cell-remote by',
  "                OCM's real agents; its kubelets, provider baseline and k3k are simulated, and",
  '                the KubeCell cell agent the hub delivers runs there as a process, so a Cell',
  '                with spec.delivery: ManifestWork places VirtualClusters on that cluster',
  '  -h, --help    this text',
].join('\n');

export interface UpOptions {
  simulate: boolean;
  /** A real OCM hub and a managed cluster `cell-remote` beside the hub (`--remote`). */
  remote: boolean;
}

/** The options of `local-up`, `'help'`, or an error message for arguments it does not take. */
export function parseUpArguments(args: readonly string[]): UpOptions | 'help' | { error: string } {
  const options: UpOptions = { simulate: false, remote: false };
  for (const arg of args) {
    if (arg === '--simulate') options.simulate = true;
    else if (arg === '--remote') options.remote = true;
    else if (arg === '-h' || arg === '--help') return 'help';
    else return { error: `unknown argument: ${arg}` };
  }
  if (options.remote && !options.simulate) {
    return {
      error:
        '--remote needs --simulate: nothing else plays the kubelets and k3k of the managed ' +
        'cluster (npm run local-up -- --simulate --remote)',
    };
  }
  return options;
}

/** Simulated Nodes per Cell machine profile (harness/simulate's profileNodes.perProfile). */
export const SIMULATED_NODES_PER_PROFILE = 2;

/**
 * spec.leaseDurationSeconds of the ManagedClusters the hub's simulation creates for the Cells
 * (stack-start.ts passes it), and how often it renews their Lease managed-cluster-lease: OCM's
 * default, 60 s (harness/simulate/ocm.ts DEFAULT_LEASE_DURATION_SECONDS), renewed every duration as
 * OCM's registration agent does. The summary states it, so both read this one value.
 */
export const SIMULATED_LEASE_DURATION_SECONDS = DEFAULT_LEASE_DURATION_SECONDS;

/** What the simulation plays, for the summary (up.ts) and the supervisor's log. */
export const SIMULATED_LINES = [
  'SIMULATED (--simulate): harness/simulate/, the same code the cluster tests use, plays the world',
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

/** The ManagedCluster `--remote` joins to the real OCM hub. */
export const REMOTE_CLUSTER_NAME = REMOTE_CLUSTER;

/**
 * Seconds between two passes of the cell agent local-up runs on the managed cluster. The
 * delivered Deployment leaves the agent's default (30 s); local-up sets 10 s so that a Cell's
 * first report arrives sooner. A VirtualCluster's sealed kubeconfig does not wait for it: the
 * agent passes within a second of a change it watches (its host namespace, k3k's Secret).
 */
export const REMOTE_AGENT_INTERVAL_SECONDS = 10;

/**
 * OCM's work agent's --status-sync-interval on cell-remote, in seconds: what docs/remote-cells.md
 * recommends for a VirtualCluster Ready within 10 s of k3k serving (the work agent re-reads each
 * ManifestWork's manifests 1 to 1.9 intervals after its last sync; OCM's own default 10 s).
 */
export const REMOTE_STATUS_SYNC_INTERVAL_SECONDS = 5;

/** What `--remote` adds, for the summary (up.ts) and the supervisor's log. */
export const REMOTE_LINES = [
  `REMOTE (--remote): the REAL Open Cluster Management hub (registration controller, work`,
  `manager, built from the pinned OCM archive) runs on the hub, and a second control plane`,
  `(etcd, kube-apiserver, kube-controller-manager) is joined to it as ManagedCluster`,
  `${REMOTE_CLUSTER_NAME} by OCM's real registration and work agents; its lease is theirs (the`,
  `simulated OCM leaves it alone), and the real registration controller judges every lease.`,
  `On ${REMOTE_CLUSTER_NAME}, harness/simulate/ plays the kubelets (${SIMULATED_NODES_PER_PROFILE} Nodes per machine profile of`,
  `the Cells bound to it), the provider baseline and k3k, and local-up runs the KubeCell cell`,
  'agent the hub delivers (ManifestWork kubecell-cell-agent) as a process, as a kubelet would',
  'run its Deployment: same command and environment, the token of its ServiceAccount',
  `kubecell-system/kubecell-cell-agent, passes every ${REMOTE_AGENT_INTERVAL_SECONDS} s and on the changes it watches; OCM's`,
  `work agent syncs the ManifestWorks' status every ${REMOTE_STATUS_SYNC_INTERVAL_SECONDS} s. The hub's KubeCell never connects`,
  `to ${REMOTE_CLUSTER_NAME}: everything arrives as ManifestWork status feedback.`,
];
