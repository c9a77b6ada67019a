// One KubeCell per test run, shared by every cluster test file: starting etcd, kube-apiserver,
// kube-controller-manager, the hook server and Metacontroller takes tens of seconds on a 2-core
// machine, far too long to repeat per file.
//
//   import { getCluster } from './shared-cluster.js';
//   before(async function () { this.timeout(CLUSTER_SETUP_TIMEOUT_MS); cluster = await getCluster(); });
//
// Tests sharing it must not depend on a pristine cluster: use a namespace (or object names) of
// their own. A test that needs a differently configured control plane starts its own with
// startControlPlane() and stops it itself.
//
// Teardown: importing this module from a spec file registers a root-level `after` hook (it runs
// once, after every test of the run) that stops the cluster, and a root-level `afterEach` that
// notes failures so that the logs are kept when something failed. `mochaGlobalTeardown` is
// exported as well for use with mocha's --require. Should neither run (crash, Ctrl-C), the
// process exit handlers of processes.ts kill every server.
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import {
  startKubeCellStack,
  type KubeCellStack,
  type KubeCellStackOptions,
} from '../../harness/cluster/kubecell-stack.js';

/**
 * Budget for a `before` hook that calls getCluster(): a cold build of the binaries took about 8
 * minutes on 2 cores (more while downloading modules or under load), a start with built binaries
 * about 5 seconds. Generous on purpose: a slow CI machine must not turn into a flaky timeout.
 */
export const CLUSTER_SETUP_TIMEOUT_MS = 60 * 60 * 1000;

/**
 * The shared cluster runs KubeCell the way it is meant to be deployed: Metacontroller with
 * server-side apply, which the Metacontroller docs recommend (DESIGN.md §6), as the
 * ServiceAccount manifests/rbac/ grants, with both GPUCellPool provisioners installed, next to
 * an OCM hub whose lease controller judges every ManagedCluster's lease (simulated,
 * harness/simulate/ocm.ts), whoever joined it.
 */
export const SHARED_CLUSTER_OPTIONS: KubeCellStackOptions = {
  applyStrategy: 'server-side-apply',
  ocmHub: true,
};

let sharedCluster: Promise<KubeCellStack> | undefined;
let sharedClusterOptionsJson: string | undefined;
let someTestFailed = false;

/**
 * The control plane of this test run, started on first use. Options are honoured by the first
 * call only; a later call asking for different options is an error rather than a silent surprise.
 */
export async function getCluster(): Promise<ControlPlane> {
  return (await getKubeCell()).cluster;
}

/** KubeCell running on the control plane of this test run (kubecell-stack.ts), started on first use. */
export function getKubeCell(
  options: KubeCellStackOptions = SHARED_CLUSTER_OPTIONS,
): Promise<KubeCellStack> {
  const optionsJson = JSON.stringify(options);
  if (sharedCluster) {
    if (optionsJson !== sharedClusterOptionsJson) {
      throw new Error(
        `the shared cluster was started with ${sharedClusterOptionsJson}; start a separate control plane for ${optionsJson}`,
      );
    }
    return sharedCluster;
  }
  sharedClusterOptionsJson = optionsJson;
  sharedCluster = startKubeCellStack(options);
  // A failed start must not be cached: the next file gets a fresh attempt and its own error.
  sharedCluster.catch(() => {
    sharedCluster = undefined;
    sharedClusterOptionsJson = undefined;
  });
  return sharedCluster;
}

/** Stops the shared cluster if it was started; keeps its logs when a test failed. */
export async function stopSharedCluster(): Promise<void> {
  const starting = sharedCluster;
  sharedCluster = undefined;
  sharedClusterOptionsJson = undefined;
  if (!starting) return;
  let stack: KubeCellStack;
  try {
    stack = await starting;
  } catch {
    return; // startKubeCellStack already stopped what it had started and kept the logs.
  }
  await stack.stop({ keepLogs: someTestFailed });
}

/** For mocha's `--require test/cluster/shared-cluster.ts` (global fixture). */
export const mochaGlobalTeardown = stopSharedCluster;

// Mocha's BDD globals exist while spec files are being loaded; at that moment the current suite
// is the root suite, so these hooks apply to the whole run. Outside mocha they are absent.
if (typeof after === 'function' && typeof afterEach === 'function') {
  afterEach(function noteFailure(this: Mocha.Context) {
    if (this.currentTest?.state === 'failed') someTestFailed = true;
  });
  after('stop the shared control plane', async function (this: Mocha.Context) {
    this.timeout(60_000);
    await stopSharedCluster();
  });
}
