// KubeCell running for real on the local control plane, the way a platform installs it:
//
//   1. etcd, kube-apiserver, kube-controller-manager (control-plane.ts)
//   2. the upstream CRDs (all, or a chosen subset: a platform may run only one provisioner),
//      KubeCell's CRDs, kubecell-system and the host namespaces (kubecell.ts)
//   3. the RBAC of manifests/rbac/ for Metacontroller's ServiceAccount metacontroller/metacontroller
//   4. the hook server (hooks/main.ts) on a free port
//   5. Metacontroller, authenticated with a bound token of that ServiceAccount, so it can do
//      exactly what manifests/ grants it and nothing more
//   6. the Metacontroller objects of metacontroller/ (the base and the chosen GPUCellPool
//      provisioner components), their hooks pointed at that hook server
//
// Nothing here plays KubeCell: the outside world (OCM, kubelets, k3k, KubeVirt, Cluster API) is
// played by test/simulate/, and everything KubeCell does is done by Metacontroller calling the
// hooks.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  readMetacontrollerObjects,
  rewriteHookUrls,
  toYamlStream,
} from '../../scripts/local/metacontroller-objects.js';
import {
  startControlPlane,
  type ControlPlane,
  type ControlPlaneOptions,
  type RunningMetacontroller,
} from './control-plane.js';
import { installKubeCellApi, kubectlOk } from './kubecell.js';
import { clusterTestDir, repoRoot } from './paths.js';
import { freeLoopbackPorts } from './ports.js';
import { startManagedProcess, type ManagedProcess } from './processes.js';
import { httpGet, waitForHttpOk } from './readiness.js';

/** The ServiceAccount manifests/rbac/metacontroller.yaml binds KubeCell's role to. */
export const METACONTROLLER_SERVICE_ACCOUNT = {
  namespace: 'metacontroller',
  name: 'metacontroller',
};

export type GpuCellPoolProvisioner = 'kubevirt' | 'cluster-api';

export interface KubeCellStackOptions {
  /** Metacontroller's --apply-strategy; default server-side-apply (what the docs recommend). */
  applyStrategy?: 'server-side-apply' | 'dynamic-apply';
  /** Which GPUCellPool provisioner components to install with their CRDs; default both. */
  provisioners?: readonly GpuCellPoolProvisioner[];
  /** Extra environment of the hook server (e.g. a short KUBECELL_PLAN_TTL_SECONDS). */
  hookServerEnv?: Readonly<Record<string, string>>;
  /** Extra Metacontroller flags (appended last, so they win). */
  metacontrollerArgs?: readonly string[];
  /** Options of the control plane itself (Metacontroller is started here, not there). */
  controlPlane?: Omit<ControlPlaneOptions, 'metacontroller'>;
  log?: (line: string) => void;
}

export interface KubeCellStack {
  cluster: ControlPlane;
  metacontroller: RunningMetacontroller;
  hookServer: ManagedProcess;
  /** http://127.0.0.1:<port> */
  hookServerUrl: string;
  /** `<kind>/<name>` of every Metacontroller object applied. */
  controllers: string[];
  /** Stops the hook server and the control plane (Metacontroller first). */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
}

const hookServerEntry = path.join(repoRoot, 'hooks', 'main.ts');
const metacontrollerDir = path.join(repoRoot, 'metacontroller');
/** Metacontroller's roles: KubeCell's controllers' needs, and Metacontroller's own. */
const rbacDirs = [
  path.join(repoRoot, 'manifests', 'rbac'),
  path.join(repoRoot, 'manifests', 'metacontroller-core'),
];

/** The Metacontroller objects to apply: the base and each provisioner component. */
export function metacontrollerObjectsFor(
  provisioners: readonly GpuCellPoolProvisioner[],
): unknown[] {
  return [
    ...readMetacontrollerObjects(metacontrollerDir),
    ...provisioners.flatMap((provisioner) =>
      readMetacontrollerObjects(path.join(metacontrollerDir, 'gpucellpool', provisioner)),
    ),
  ];
}

/** The upstream CRD files a provisioner needs; the others are left out of its cluster. */
const PROVISIONER_CRDS: Record<GpuCellPoolProvisioner, RegExp> = {
  kubevirt: /kubevirt/,
  'cluster-api': /cluster\.x-k8s\.io/,
};

export async function startKubeCellStack(
  options: KubeCellStackOptions = {},
): Promise<KubeCellStack> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[kubecell-stack] ${line}\n`));
  const provisioners = options.provisioners ?? ['kubevirt', 'cluster-api'];
  const cluster = await startControlPlane({ ...options.controlPlane, log });
  let hookServer: ManagedProcess | undefined;
  try {
    const excluded = (Object.keys(PROVISIONER_CRDS) as GpuCellPoolProvisioner[])
      .filter((provisioner) => !provisioners.includes(provisioner))
      .map((provisioner) => PROVISIONER_CRDS[provisioner]);
    const [hookPort] = (await freeLoopbackPorts(1)) as [number];
    const hookServerUrl = `http://127.0.0.1:${hookPort}`;
    hookServer = startManagedProcess({
      name: 'hook-server',
      command: process.execPath,
      args: ['--import', 'tsx', hookServerEntry],
      cwd: repoRoot,
      logDir: cluster.logDir,
      env: hookServerEnvironment(hookPort, options.hookServerEnv),
    });
    const runningHookServer = hookServer;
    await Promise.all([
      installKubeCellApi(cluster, {
        excludeUpstreamCrds: excluded,
        // KubeVirt publishes no CRD file in the shared upstream inputs; its permissive
        // stand-in (named as such) is what a KubeVirt platform's apiserver serves here.
        extraCrdFiles: provisioners.includes('kubevirt')
          ? [path.join(clusterTestDir, 'kubevirt-permissive-crd.yaml')]
          : [],
      }),
      waitForHttpOk(
        'hook server /readyz',
        `${hookServerUrl}/readyz`,
        {},
        { timeoutMs: 60_000, process: runningHookServer },
      ),
    ]);
    await kubectlOk(cluster, [
      'apply',
      '--server-side',
      '--field-manager=kubecell-tests',
      ...rbacDirs.flatMap((dir) =>
        readdirSync(dir)
          .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
          .sort()
          .flatMap((file) => ['-f', path.join(dir, file)]),
      ),
    ]);
    const metacontroller = await cluster.startMetacontroller({
      identity: { serviceAccount: METACONTROLLER_SERVICE_ACCOUNT },
      applyStrategy: options.applyStrategy ?? 'server-side-apply',
      // Its defaults (5 QPS, burst 10) are what a platform starts with; the tests keep them
      // unless a scenario says otherwise, so that what they show holds for a default install.
      extraArgs: options.metacontrollerArgs ?? [],
    });
    const { objects } = rewriteHookUrls(metacontrollerObjectsFor(provisioners), hookServerUrl);
    const applied = await kubectlOk(
      cluster,
      ['apply', '--server-side', '--field-manager=kubecell-tests', '-f', '-'],
      toYamlStream(objects),
    );
    const controllers = applied
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[0] ?? line);
    log(`KubeCell controllers applied: ${controllers.join(', ')}`);
    return {
      cluster,
      metacontroller,
      hookServer: runningHookServer,
      hookServerUrl,
      controllers,
      async stop(stopOptions = {}): Promise<void> {
        await runningHookServer.stop();
        await cluster.stop(stopOptions);
      },
    };
  } catch (error) {
    await hookServer?.stop();
    await cluster.stop({ keepLogs: true });
    throw error;
  }
}

function hookServerEnvironment(
  port: number,
  extra: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECELL_PORT: String(port),
    KUBECELL_LOG_LEVEL: 'info',
    ...extra,
  };
  // The admission webhook needs certificates and a fixed port; the cluster tests of the
  // webhook start it themselves.
  if (extra.KUBECELL_TLS_CERT_FILE === undefined) delete env.KUBECELL_TLS_CERT_FILE;
  if (extra.KUBECELL_TLS_KEY_FILE === undefined) delete env.KUBECELL_TLS_KEY_FILE;
  return env;
}

/** Counter values of the hook server's /metrics, by metric name and label set. */
export async function hookServerMetrics(stack: KubeCellStack): Promise<string> {
  const response = await httpGet(`${stack.hookServerUrl}/metrics`, {});
  if (response.status !== 200) throw new Error(`hook server /metrics answered ${response.status}`);
  return response.body;
}
