// KubeCell running for real on the local control plane, the way a platform installs it:
//
//   1. etcd, kube-apiserver, kube-controller-manager (control-plane.ts)
//   2. the upstream CRDs (all, or a chosen subset: a platform may run only one provisioner),
//      KubeCell's CRDs, kubecell-system and the host namespaces (kubecell.ts)
//   3. the RBAC of manifests/rbac/ for Metacontroller's ServiceAccount metacontroller/metacontroller
//   4. the hook server (hooks/main.ts) on a free port, with its admission webhook on HTTPS
//      (a certificate for 127.0.0.1) and the webhook configurations of manifests/webhook
//      pointed at it, so objects are labelled and validated as on a real install
//   5. Metacontroller, authenticated with a bound token of that ServiceAccount, so it can do
//      exactly what manifests/ grants it and nothing more, started with the args of the
//      StatefulSet manifests/metacontroller-install/ renders (metacontroller-install.ts)
//   6. the Metacontroller objects of metacontroller/ (the base and the chosen GPUCellPool
//      provisioner components), their hooks pointed at that hook server
//
//   7. optionally (`ocmHub: true`), OCM's hub lease controller as harness/simulate/ocm.ts plays it: on
//      a real platform the OCM hub always runs it, so every Cell is judged live or not by it; or
//      (`ocmHub: 'real'`) the real OCM hub (ocm-hub.ts: its own CRDs instead of the shared
//      ManagedCluster/ManifestWork CRDs, registration controller, work manager), optionally with
//      a real managed cluster joined to it (`ocmManagedCluster`, ocm-managed.ts). Metacontroller
//      and the hook server are only ever given the hub's kubeconfigs (`hubComponentKubeconfigs`).
//
// Nothing here plays KubeCell: the outside world (OCM, kubelets, k3k, KubeVirt, Cluster API) is
// played by harness/simulate/, and everything KubeCell does is done by Metacontroller calling the
// hooks.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  readMetacontrollerObjects,
  rewriteHookUrls,
  toYamlStream,
} from './metacontroller-objects.js';
import {
  startControlPlane,
  type ControlPlane,
  type ControlPlaneOptions,
  type RunningMetacontroller,
} from './control-plane.js';
import { KubeClient } from '../simulate/kube-client.js';
import { HubLeaseController } from '../simulate/ocm.js';
import { upstreamCrdsLeftOut } from './crds.js';
import { installKubeCellApi, kubectlOk } from './kubecell.js';
import { startOcmHub, writeOcmHubCrdFiles, type OcmHub } from './ocm-hub.js';
import {
  startOcmManagedCluster,
  type OcmManagedCluster,
  type OcmManagedClusterOptions,
} from './ocm-managed.js';
import { metacontrollerInstallArgs } from './metacontroller-install.js';
import { harnessClusterDir, repoRoot } from './paths.js';
import { freeLoopbackPorts } from './ports.js';
import { startManagedProcess, type ManagedProcess } from './processes.js';
import { httpGet, waitForHttpOk } from './readiness.js';
import { webhookConfigurations, webhookServing } from './webhook-serving.js';

/** The ServiceAccount manifests/rbac/metacontroller.yaml binds KubeCell's role to. */
export const METACONTROLLER_SERVICE_ACCOUNT = {
  namespace: 'metacontroller',
  name: 'metacontroller',
};

/** The hook server's ServiceAccount (manifests/hook-server/serviceaccount.yaml). */
export const HOOK_SERVER_SERVICE_ACCOUNT = { namespace: 'kubecell-system', name: 'kubecell-hooks' };

export type GpuCellPoolProvisioner = 'kubevirt' | 'cluster-api';

export interface KubeCellStackOptions {
  /**
   * Metacontroller's --apply-strategy; default manifests/metacontroller-install/'s
   * (server-side-apply, what the docs recommend).
   */
  applyStrategy?: 'server-side-apply' | 'dynamic-apply';
  /** Which GPUCellPool provisioner components to install with their CRDs; default both. */
  provisioners?: readonly GpuCellPoolProvisioner[];
  /** Extra environment of the hook server (e.g. a short KUBECELL_PLAN_TTL_SECONDS). */
  hookServerEnv?: Readonly<Record<string, string>>;
  /** Run the admission webhook and register it with the apiserver; default true. */
  webhook?: boolean;
  /** Extra Metacontroller flags (appended last, so they win). */
  metacontrollerArgs?: readonly string[];
  /**
   * `true`: run OCM's hub lease controller as simulated (harness/simulate/ocm.ts HubLeaseController):
   * a ManagedCluster whose lease is not renewed for 5 lease durations turns Available=Unknown,
   * which a Cell reads as a stale lease. `'real'`: run the real OCM hub instead (ocm-hub.ts), with
   * OCM's own hub CRDs from its archive in place of the shared ManagedCluster/ManifestWork CRDs;
   * the hub's kube-controller-manager then signs client CSRs. Default false: `npm run local-up`
   * leaves OCM to `--simulate`.
   */
  ocmHub?: boolean | 'real';
  /**
   * With `ocmHub: 'real'`: start a managed cluster (a second control plane) and join it to the
   * hub with OCM's real agents (ocm-managed.ts; default name `cell-remote`).
   */
  ocmManagedCluster?: OcmManagedClusterOptions;
  /** Options of the control plane itself (Metacontroller is started here, not there). */
  controlPlane?: Omit<ControlPlaneOptions, 'metacontroller'>;
  log?: (line: string) => void;
}

export interface KubeCellStack {
  cluster: ControlPlane;
  /** The running Metacontroller (a new process after restartMetacontroller). */
  readonly metacontroller: RunningMetacontroller;
  /**
   * Metacontroller stopped and started again with the same flags; once ready. Its in-memory
   * caches go with it, among them the customize answers it keeps 20 minutes per parent UID and
   * generation (pkg/controller/common/customize/manager.go): the quick way to the rules a parent
   * asks for in steady state.
   */
  restartMetacontroller(): Promise<void>;
  /** The running hook server (a new process after restartHookServer). */
  readonly hookServer: ManagedProcess;
  /** The hook server restarted on its port with `hookServerEnv` for the options'; once ready. */
  restartHookServer(hookServerEnv: Readonly<Record<string, string>>): Promise<void>;
  /** http://127.0.0.1:<port> */
  hookServerUrl: string;
  /** `<kind>/<name>` of every Metacontroller object applied. */
  controllers: string[];
  /** The simulated OCM hub's lease controller, when `ocmHub: true` asked for it. */
  ocmHub?: HubLeaseController;
  /** The real OCM hub (`ocmHub: 'real'`) and the managed cluster joined to it, if any. */
  ocm?: { hub: OcmHub; managedCluster?: OcmManagedCluster };
  /**
   * The only kubeconfigs the hub-side KubeCell components were given, by component: a test can
   * check with ocm.ts kubeconfigServers() that none of them reaches a managed cluster.
   */
  hubComponentKubeconfigs: { metacontroller: string; hookServer: string };
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

export async function startKubeCellStack(
  options: KubeCellStackOptions = {},
): Promise<KubeCellStack> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[kubecell-stack] ${line}\n`));
  const provisioners = options.provisioners ?? ['kubevirt', 'cluster-api'];
  const realOcm = options.ocmHub === 'real';
  if (options.ocmManagedCluster && !realOcm) {
    throw new Error("ocmManagedCluster needs ocmHub: 'real' (a managed cluster joins a real hub)");
  }
  const cluster = await startControlPlane({
    ...options.controlPlane,
    ...(realOcm ? { signClientCertificates: true } : {}),
    log,
  });
  let hookServer: ManagedProcess | undefined;
  let ocmHub: OcmHub | undefined;
  let managedCluster: OcmManagedCluster | undefined;
  try {
    const excluded = upstreamCrdsLeftOut(provisioners, realOcm);
    const [hookPort, webhookPort] = (await freeLoopbackPorts(2)) as [number, number];
    const hookServerUrl = `http://127.0.0.1:${hookPort}`;
    const webhook =
      options.webhook === false ? undefined : await webhookServing(cluster, webhookPort);
    // The hook server runs as its ServiceAccount: its only permissions are the webhook's
    // read-only lookups (manifests/webhook/base/rbac.yaml).
    const hookServerKubeconfig = await cluster.kubeconfigForServiceAccount(
      HOOK_SERVER_SERVICE_ACCOUNT,
    );
    await kubectlOk(cluster, [
      'apply',
      '--server-side',
      '--field-manager=kubecell-tests',
      '-f',
      path.join(repoRoot, 'manifests', 'webhook', 'base', 'rbac.yaml'),
    ]);
    const launchHookServer = (hookServerEnv = options.hookServerEnv) =>
      startManagedProcess({
        name: 'hook-server',
        command: process.execPath,
        args: ['--import', 'tsx', hookServerEntry],
        cwd: repoRoot,
        logDir: cluster.logDir,
        env: hookServerEnvironment(hookPort, {
          KUBECONFIG: hookServerKubeconfig,
          ...(webhook
            ? {
                KUBECELL_WEBHOOK_PORT: String(webhookPort),
                KUBECELL_TLS_CERT_FILE: webhook.certFile,
                KUBECELL_TLS_KEY_FILE: webhook.keyFile,
              }
            : {}),
          ...hookServerEnv,
        }),
      });
    const hookServerReady = (running: ManagedProcess) =>
      waitForHttpOk(
        'hook server /readyz',
        `${hookServerUrl}/readyz`,
        {},
        {
          timeoutMs: 60_000,
          process: running,
        },
      );
    hookServer = launchHookServer();
    let runningHookServer = hookServer;
    await Promise.all([
      installKubeCellApi(cluster, {
        excludeUpstreamCrds: excluded,
        // KubeVirt publishes no CRD file in the shared upstream inputs; its permissive
        // stand-in (named as such) is what a KubeVirt platform's apiserver serves here.
        extraCrdFiles: [
          ...(provisioners.includes('kubevirt')
            ? [path.join(harnessClusterDir, 'kubevirt-permissive-crd.yaml')]
            : []),
          ...(realOcm
            ? writeOcmHubCrdFiles(
                cluster.binaries.ocmSourceDir,
                path.join(cluster.dir, 'ocm-hub-crds'),
              )
            : []),
        ],
      }),
      hookServerReady(runningHookServer),
    ]);
    if (webhook) {
      await kubectlOk(
        cluster,
        ['apply', '--server-side', '--field-manager=kubecell-tests', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: webhookConfigurations(`https://127.0.0.1:${webhookPort}`, webhook.caBundle),
        }),
      );
    }
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
    // Metacontroller runs with the args manifests/metacontroller-install/ renders for its
    // StatefulSet, the binary built from the same release standing in for its image, so that what
    // the tests show holds for that install and the overlay cannot rot (metacontroller-install.ts
    // drops only the flags a process on loopback needs its own values of). A test's apply
    // strategy and flags come after, so they win.
    const installArgs = metacontrollerInstallArgs(
      cluster.binaries.kubectl,
      cluster.binaries.versions.metacontroller.version,
    );
    log(`Metacontroller flags from manifests/metacontroller-install: ${installArgs.join(' ')}`);
    const metacontrollerOptions = {
      identity: { serviceAccount: METACONTROLLER_SERVICE_ACCOUNT },
      extraArgs: [
        ...installArgs,
        ...(options.applyStrategy ? [`--apply-strategy=${options.applyStrategy}`] : []),
        ...(options.metacontrollerArgs ?? []),
      ],
    } as const;
    let metacontroller = await cluster.startMetacontroller(metacontrollerOptions);
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
    if (realOcm) {
      ocmHub = await startOcmHub(cluster, { installCrds: false, log });
      if (options.ocmManagedCluster) {
        managedCluster = await startOcmManagedCluster(ocmHub, options.ocmManagedCluster);
      }
    }
    const hubClient = options.ocmHub === true ? new KubeClient(cluster.kubeconfigPath) : undefined;
    const simulatedOcmHub = hubClient ? new HubLeaseController(hubClient) : undefined;
    simulatedOcmHub?.start();
    const realHub = ocmHub;
    const realManagedCluster = managedCluster;
    return {
      cluster,
      get metacontroller() {
        return metacontroller;
      },
      async restartMetacontroller() {
        await metacontroller.process.stop();
        metacontroller = await cluster.startMetacontroller(metacontrollerOptions);
      },
      get hookServer() {
        return runningHookServer;
      },
      async restartHookServer(hookServerEnv) {
        await runningHookServer.stop();
        runningHookServer = launchHookServer(hookServerEnv);
        await hookServerReady(runningHookServer);
      },
      hookServerUrl,
      controllers,
      ...(simulatedOcmHub ? { ocmHub: simulatedOcmHub } : {}),
      ...(realHub
        ? {
            ocm: {
              hub: realHub,
              ...(realManagedCluster ? { managedCluster: realManagedCluster } : {}),
            },
          }
        : {}),
      hubComponentKubeconfigs: {
        metacontroller: metacontroller.kubeconfigPath,
        hookServer: hookServerKubeconfig,
      },
      async stop(stopOptions = {}): Promise<void> {
        const keepLogs =
          (stopOptions.keepLogs ?? false) ||
          (realHub?.crashed() ?? false) ||
          (realManagedCluster?.crashed() ?? false);
        await realManagedCluster?.stop({ keepLogs });
        await realHub?.stop();
        await simulatedOcmHub?.stop();
        hubClient?.close();
        await runningHookServer.stop();
        await cluster.stop({ keepLogs });
      },
    };
  } catch (error) {
    await managedCluster?.stop({ keepLogs: true });
    await ocmHub?.stop();
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
