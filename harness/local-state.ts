// The state file of `npm run local-up` (state.json in its local directory): what the supervisor
// records of the running instance. scripts/local writes and reads it (state.ts); the tests that
// run local-up as a user read it to find the instance's kubeconfig, kubectl and processes
// (test/cluster/local-scripts.ts).

/** A process the local instance started; each leads its own process group. */
export interface RecordedProcess {
  pid: number;
  /** The executable it was started from, to tell it from a later process with the same pid. */
  command: string;
  logFile: string;
}

export interface LocalState {
  /** true once everything runs and the kubeconfig works. */
  ready: boolean;
  /** Set when starting failed; the supervisor has then stopped everything and exited. */
  error?: string;
  supervisorPid: number;
  startedAt: string;
  /** Seconds from the supervisor's start until ready (binaries included). */
  startupSeconds?: number;
  /** The control plane's temporary directory (data, certificates, component logs). */
  dir?: string;
  /** Cluster-admin kubeconfig (a copy under the local directory). */
  kubeconfig?: string;
  apiserverUrl?: string;
  /** http://127.0.0.1:<port> */
  hookServerUrl?: string;
  /** The kubectl built for this cluster's version. */
  kubectl?: string;
  /** The Metacontroller release running. */
  metacontrollerVersion?: string;
  /** Whether the simulated outside world (harness/simulate/) runs: `--simulate`. */
  simulated?: boolean;
  /** With `--remote`: the managed cluster joined to the real OCM hub. */
  remote?: RemoteState;
  /** `kind/name` of the Metacontroller objects applied from metacontroller/. */
  metacontrollerObjects?: string[];
  /** Every server process, by name (etcd, kube-apiserver, ..., hook-server). */
  processes: Record<string, RecordedProcess>;
}

export interface RemoteState {
  /** The ManagedCluster's name on the hub (cell-remote). */
  managedCluster: string;
  /** Cluster-admin kubeconfig of the managed cluster (a copy under remote/). */
  kubeconfig?: string;
  apiserverUrl?: string;
  /** The ready-to-apply sample: a Cell with delivery ManifestWork and a VirtualCluster on it. */
  sampleFile?: string;
  /** The hub's private sealing key (KUBECELL_SEALING_KEY_FILE of the hook server). */
  sealingKeyFile?: string;
}
