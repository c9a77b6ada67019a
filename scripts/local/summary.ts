// What `npm run local-up` prints once the instance is ready (up.ts): the KUBECONFIG to export,
// how to try it, what runs and what is simulated, and with --remote the managed cluster's
// kubeconfig and the sample to apply. Every line is an `export` or a `#` comment, so that
// `eval "$(npm run --silent local-up -- ...)"` works.
import { REASONS } from '../../hooks/cell/reasons.js';
import { LEASE_DURATION_TIMES, MANAGED_CLUSTER_LEASE } from '../../harness/simulate/ocm.js';
import {
  REMOTE_CLUSTER_NAME,
  REMOTE_LINES,
  SIMULATED_LEASE_DURATION_SECONDS,
  SIMULATED_LINES,
} from './options.js';
import { REMOTE_SAMPLE } from './remote-files.js';
import { supervisorLogFile, type LocalState, type RemoteState } from './state.js';

/** The --remote part of the summary: the managed cluster, the sample, what to watch. */
export function remoteLines(remote: RemoteState, kubectl = 'kubectl'): string[] {
  const cluster = remote.managedCluster;
  const onManaged = `KUBECONFIG=${remote.kubeconfig ?? '?'} kubectl`;
  return [
    ...REMOTE_LINES.map((line) => `# ${line}`),
    `# The managed cluster ${cluster} (${remote.apiserverUrl ?? '?'}), its admin KUBECONFIG:`,
    `#   export REMOTE_KUBECONFIG=${remote.kubeconfig ?? '?'}`,
    `# Try it: a Cell with spec.delivery ManifestWork bound to ${cluster}, and a VirtualCluster on it:`,
    `#   kubectl apply -f ${remote.sampleFile ?? '?'}`,
    `#   kubectl get cell ${REMOTE_SAMPLE.cell} -n kubecell-system; kubectl get virtualcluster -n ${REMOTE_SAMPLE.namespace}`,
    `#   kubectl get manifestworks -n ${cluster}      # what the hub delivers, with OCM's status`,
    `#   ${onManaged} get nodes,deploy -A       # on ${cluster}: its Nodes, the cell agent`,
    `#   ${onManaged} get clusters.k3k.io,svc -n ${REMOTE_SAMPLE.namespace}`,
    `#   (the hub's private sealing key: ${remote.sealingKeyFile ?? '?'}; kubectl: ${kubectl})`,
  ];
}

/** Where the docs register a cluster as the ManagedCluster of Local Cells, with OCM's tools. */
export const REGISTER_HUB_DOC = 'docs/operations.md#register-the-hub-as-a-managedcluster';

/** The ManagedCluster the samples' Local Cell names (spec.managedClusterRef.name), as an example. */
export const SAMPLE_MANAGED_CLUSTER = 'cell1';

/**
 * What local-up does in place of OCM's registration of the Cells' ManagedClusters (on a real hub,
 * the hub itself, joined by OCM's klusterlet and accepted: REGISTER_HUB_DOC). --simulate:
 * harness/simulate/ (index.ts syncCells, ocm.ts joinManagedCluster, LeaseRenewer,
 * HubLeaseController) creates each one a Cell names and renews its lease; without it nothing does,
 * and the Cell controller finds none (hooks/cell/status.ts joinedCondition).
 */
export function managedClusterLines(simulated: boolean, remote: boolean): string[] {
  const lease = SIMULATED_LEASE_DURATION_SECONDS;
  if (!simulated) {
    return [
      "#   - OCM's registration: no ManagedCluster exists and nothing creates one, so every Cell",
      `#     stays Pending (condition Joined False, reason ${REASONS.ManagedClusterNotFound}); on a real cluster,`,
      `#     register it with OCM's tools: ${REGISTER_HUB_DOC}`,
    ];
  }
  const judged = remote
    ? [
        `#   namespace every ${lease} s; OCM's real registration controller (--remote) judges that lease.`,
      ]
    : [
        `#   namespace every ${lease} s; a simulated hub lease controller sets Available Unknown once`,
        `#   that lease is not renewed for ${LEASE_DURATION_TIMES} × ${lease} s, as OCM's does.`,
      ];
  const except = remote ? ` (except ${REMOTE_CLUSTER_NAME})` : '';
  return [
    `# ManagedClusters of the Cells${except}: SIMULATED, not registered by OCM (no klusterlet,`,
    '#   no CSR, no clusteradm). For every ManagedCluster a Cell names (spec.managedClusterRef.name,',
    `#   e.g. ${SAMPLE_MANAGED_CLUSTER} in samples/), harness/simulate/ creates it accepted (spec.hubAcceptsClient`,
    `#   true, spec.leaseDurationSeconds ${lease}) with its namespace and the conditions`,
    '#   HubAcceptedManagedCluster, ManagedClusterJoined and ManagedClusterConditionAvailable True,',
    `#   and renews its Lease ${MANAGED_CLUSTER_LEASE} in that`,
    ...judged,
    `#   See them: kubectl get managedclusters; kubectl -n ${SAMPLE_MANAGED_CLUSTER} get lease ${MANAGED_CLUSTER_LEASE}`,
    `#   On a real cluster the hub registers itself, with OCM's tools: ${REGISTER_HUB_DOC}`,
  ];
}

/** The Composite- and DecoratorControllers among the objects applied from metacontroller/. */
function controllerNames(state: LocalState): string[] {
  return (state.metacontrollerObjects ?? [])
    .filter((object) => /^(composite|decorator)controller\./.test(object))
    .map((object) => object.slice(object.indexOf('/') + 1));
}

/** What local-up prints on stdout once ready: `export` lines and `#` comments only. */
export function summary(state: LocalState): string[] {
  const seconds =
    state.startupSeconds === undefined ? '' : ` in ${state.startupSeconds.toFixed(1)} s`;
  const lines = [
    `export KUBECONFIG=${state.kubeconfig ?? ''}`,
    `# KubeCell local is up${seconds}${state.simulated ? ', WITH a SIMULATED outside world' : ''} ` +
      `(supervisor pid ${state.supervisorPid}).`,
    '# Try it:',
    '#   kubectl apply -f samples/',
    '#   kubectl get cells -n kubecell-system; kubectl get virtualclusters -A; kubectl get gpucellpools',
  ];
  if (state.kubectl) {
    lines.push(`#   (a kubectl matching this cluster: ${state.kubectl})`);
  }
  lines.push(
    `# Running: etcd, kube-apiserver, kube-controller-manager (${state.apiserverUrl ?? '?'}),`,
    "#   KubeCell's CRDs and the upstream CRDs it uses, namespaces kubecell-system, kubecell-cells, tenant-a, tenant-b,",
    `#   the hook server on ${state.hookServerUrl ?? '?'} with the admission webhook (log ${state.processes['hook-server']?.logFile ?? '?'}),`,
    `#   Metacontroller ${state.metacontrollerVersion ?? ''} as metacontroller/metacontroller, and the controllers`,
    `#   of metacontroller/: ${controllerNames(state).join(', ')}`,
    '#   (their hooks pointed at that server): applied objects are reconciled and get a status.',
  );
  if (state.simulated) {
    lines.push(...SIMULATED_LINES.map((line) => `# ${line}`));
    lines.push(...managedClusterLines(true, state.remote !== undefined));
    if (state.remote) lines.push(...remoteLines(state.remote, state.kubectl));
  } else {
    lines.push(
      '# NOT running, and not simulated:',
      '#   - a kubelet: there are no nodes, so no Pod ever starts.',
      '#   - the k3k, Open Cluster Management, Cluster API and KubeVirt controllers: their objects',
      '#     (where the CRDs are installed) are stored, and nothing acts on them; so Cells and',
      '#     VirtualClusters do not become Ready.',
      ...managedClusterLines(false, false),
      '#   `npm run local-up -- --simulate` plays them (simulated by harness/simulate/): samples become Ready.',
    );
  }
  lines.push(
    `# Logs: ${supervisorLogFile}, control plane ${state.dir ?? '?'}/logs`,
    `# Stop it (and every process it started${state.simulated ? ', the simulation included' : ''}): npm run local-down`,
  );
  return lines;
}
