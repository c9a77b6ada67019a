// A real Open Cluster Management hub on a local control plane: OCM's hub CRDs from the pinned
// source archive (manifests/cluster-manager/hub/crds/), `registration controller` and
// `work manager` built from it (binaries.ts), and the bootstrap identity a managed cluster's
// registration agent joins with (ocm-managed.ts).
//
// The hub signs the agents' client certificates the way a kubeadm hub does: kube-controller-
// manager's CSR signing controller with the hub's client CA (control-plane.ts
// `signClientCertificates`), after `registration controller --auto-approved-csr-users=<the
// bootstrap user>` approved the CSR (OCM v1.3.1 pkg/registration/register/csr/approve_reconciler.go).
// OCM's own integration tests (test/integration/registration/integration_suite_test.go) sign the
// CSR with the apiserver's client CA themselves; here the hub's own controller does it.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ControlPlane } from './control-plane.js';
import { installCrds } from './crds.js';
import { kubectlOk } from './kubecell.js';
import { freeLoopbackPorts } from './ports.js';
import { poll } from '../poll.js';
import { startManagedProcess, whileRunning, type ManagedProcess } from './processes.js';
import { waitForHttpOk } from './readiness.js';

/** Where the hub controllers run (their events, OCM's `--namespace`). */
export const OCM_HUB_NAMESPACE = 'open-cluster-management-hub';

/**
 * The identity a registration agent bootstraps with: a client certificate of the hub's CA in the
 * group OCM's cluster-manager chart binds its bootstrap role to.
 */
export const OCM_BOOTSTRAP_IDENTITY = {
  userName: 'system:open-cluster-management:bootstrap:kubecell-test',
  groups: ['system:bootstrappers:managedcluster'],
} as const;

/**
 * OCM's bootstrap ClusterRole and its binding, as the cluster-manager chart renders them
 * (deploy/cluster-manager/chart/cluster-manager/templates/bootstrap_cluster_role.yaml and
 * bootstrap_cluster_role_binding.yaml in the archive): what an agent may do before it has a
 * certificate of its own.
 */
export const OCM_BOOTSTRAP_RBAC = [
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'open-cluster-management:bootstrap' },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
      {
        apiGroups: ['certificates.k8s.io'],
        resources: ['certificatesigningrequests'],
        verbs: ['create', 'get', 'list', 'watch'],
      },
      {
        apiGroups: ['cluster.open-cluster-management.io'],
        resources: ['managedclusters'],
        verbs: ['get', 'create', 'list', 'watch'],
      },
      {
        apiGroups: ['cluster.open-cluster-management.io'],
        resources: ['managedclustersets/join'],
        verbs: ['create'],
      },
    ],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'open-cluster-management:bootstrap:managedcluster' },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'open-cluster-management:bootstrap',
    },
    subjects: [
      {
        kind: 'Group',
        apiGroup: 'rbac.authorization.k8s.io',
        name: 'system:bootstrappers:managedcluster',
      },
    ],
  },
];

/**
 * The archive's hub CRDs, written into `targetDir` ready to apply. Two of them
 * (ManagedClusterAddOn, ClusterManagementAddOn) are templates of the cluster-manager operator:
 * their `spec.conversion` names the addon webhook Service and its CA (`{{ .ClusterManagerNamespace }}`,
 * `{{ .AddonAPIServiceCABundle }}`). No addon webhook runs here and no addon object is ever
 * created, so that block is left out (conversion strategy None); everything else is byte for byte
 * the archive's. Returns the files, sorted.
 */
export function writeOcmHubCrdFiles(ocmSourceDir: string, targetDir: string): string[] {
  const sourceDir = path.join(ocmSourceDir, 'manifests', 'cluster-manager', 'hub', 'crds');
  mkdirSync(targetDir, { recursive: true });
  return readdirSync(sourceDir)
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const text = withoutTemplatedConversion(readFileSync(path.join(sourceDir, file), 'utf8'));
      if (text.includes('{{')) throw new Error(`${file}: an OCM template value is left`);
      const target = path.join(targetDir, file);
      writeFileSync(target, text);
      return target;
    });
}

/** Drops a top-level `spec.conversion:` block (two-space indented) that holds template values. */
function withoutTemplatedConversion(text: string): string {
  const lines = text.split('\n');
  const start = lines.indexOf('  conversion:');
  if (start === -1 || !text.includes('{{')) return text;
  let end = start + 1;
  while (end < lines.length && /^ {3,}\S|^ {2}- /.test(lines[end] ?? '')) end += 1;
  return [...lines.slice(0, start), ...lines.slice(end)].join('\n');
}

/** The managed-cluster side CRDs of the archive (AppliedManifestWork, ClusterClaim, ClusterProperty). */
export function ocmManagedClusterCrdFiles(ocmSourceDir: string): string[] {
  const dir = path.join(ocmSourceDir, 'manifests', 'klusterlet', 'managed');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.crd.yaml'))
    .sort()
    .map((file) => path.join(dir, file));
}

export interface OcmHubOptions {
  /**
   * Install the archive's hub CRDs; default true. False when they are already installed (the
   * KubeCell stack installs them with KubeCell's API).
   */
  installCrds?: boolean;
  /** Extra flags of `registration controller`. */
  registrationControllerArgs?: readonly string[];
  /** How long each process may take to answer /healthz; default 60 s. */
  readinessTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface OcmHub {
  /** The hub's control plane (as given). */
  cluster: ControlPlane;
  registrationController: ManagedProcess;
  workManager: ManagedProcess;
  /** A kubeconfig for a registration agent's bootstrap (OCM_BOOTSTRAP_IDENTITY). */
  bootstrapKubeconfigPath: string;
  /** Path of the `registration` and `work` binaries, for the agents. */
  binaries: { registration: string; work: string; ocmSourceDir: string };
  /** Seconds from startOcmHub() until both controllers answered /healthz. */
  startupSeconds: number;
  /** True when a hub process exited on its own. */
  crashed(): boolean;
  /** Stops both controllers (not the control plane). */
  stop(): Promise<void>;
}

/** Starts OCM's hub controllers on `hub`, whose kube-controller-manager must sign client CSRs. */
export async function startOcmHub(hub: ControlPlane, options: OcmHubOptions = {}): Promise<OcmHub> {
  const log = options.log ?? ((line: string) => process.stderr.write(`[ocm-hub] ${line}\n`));
  if (!hub.signsClientCertificates) {
    throw new Error(
      'the OCM hub needs a control plane started with signClientCertificates: true (its ' +
        "kube-controller-manager signs the registration agents' certificates)",
    );
  }
  const started = performance.now();
  const { ocmRegistration, ocmWork, ocmSourceDir } = hub.binaries;
  if (options.installCrds !== false) {
    await installCrds(
      hub.kubectl,
      writeOcmHubCrdFiles(ocmSourceDir, path.join(hub.dir, 'ocm-hub-crds')),
    );
  }
  await kubectlOk(
    hub,
    ['apply', '--server-side', '--field-manager=kubecell-tests', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OCM_HUB_NAMESPACE } },
        ...OCM_BOOTSTRAP_RBAC,
      ],
    }),
  );
  const [controllerKubeconfig, workManagerKubeconfig, bootstrapKubeconfigPath] = await Promise.all([
    // Cluster administrators, as the cluster-manager operator's ClusterRoles make them in effect
    // (they create the RBAC of every managed cluster).
    hub.kubeconfigFor({ userName: 'ocm-registration-controller', groups: ['system:masters'] }),
    hub.kubeconfigFor({ userName: 'ocm-work-manager', groups: ['system:masters'] }),
    hub.kubeconfigFor(OCM_BOOTSTRAP_IDENTITY),
  ]);
  const [registrationPort, workPort] = (await freeLoopbackPorts(2)) as [number, number];
  const tmpDir = path.join(hub.dir, 'ocm-hub-tmp');
  mkdirSync(tmpDir, { recursive: true });
  const common = (port: number, kubeconfig: string): string[] => [
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${OCM_HUB_NAMESPACE}`,
    '--disable-leader-election',
    // library-go serves /healthz (and metrics) here; its default 0.0.0.0:8443 would collide.
    `--listen=127.0.0.1:${port}`,
  ];
  // library-go writes a self-signed serving certificate into $TMPDIR: keep it in the hub's dir.
  const env = { ...process.env, TMPDIR: tmpDir };
  const registrationController = startManagedProcess({
    name: 'ocm-registration-controller',
    command: ocmRegistration,
    logDir: hub.logDir,
    env,
    args: [
      'controller',
      ...common(registrationPort, controllerKubeconfig),
      // --auto-approved-csr-users takes effect only with this (alpha) gate
      // (pkg/registration/register/csr/hub_driver.go NewCSRHubDriver); OCM's integration suite
      // enables it too. It also accepts a cluster on its first join (hubAcceptsClient).
      '--feature-gates=ManagedClusterAutoApproval=true',
      `--auto-approved-csr-users=${OCM_BOOTSTRAP_IDENTITY.userName}`,
      ...(options.registrationControllerArgs ?? []),
    ],
  });
  const workManager = startManagedProcess({
    name: 'ocm-work-manager',
    command: ocmWork,
    logDir: hub.logDir,
    env,
    args: ['manager', ...common(workPort, workManagerKubeconfig)],
  });
  const processes = [registrationController, workManager];
  let stopping = false;
  const stop = async (): Promise<void> => {
    stopping = true;
    for (const managed of [...processes].reverse()) await managed.stop();
  };
  try {
    const timeoutMs = options.readinessTimeoutMs ?? 60_000;
    const healthz = (managed: ManagedProcess, port: number): Promise<void> =>
      waitForHttpOk(
        `${managed.name} /healthz`,
        `https://127.0.0.1:${port}/healthz`,
        { insecure: true },
        { timeoutMs, process: managed },
      );
    await Promise.all([
      healthz(registrationController, registrationPort),
      healthz(workManager, workPort),
    ]);
    // The DefaultClusterSet controller creates ManagedClusterSet `default` once the hub
    // controllers' informers run: the registration controller is working, not only serving.
    await poll(
      'OCM ManagedClusterSet default (the registration controller is reconciling)',
      async () => {
        const result = await hub.kubectl([
          'get',
          'managedclustersets.cluster.open-cluster-management.io',
          'default',
          '-o',
          'name',
        ]);
        return result.code === 0 ? { value: undefined } : { notYet: result.stderr.trim() };
      },
      { timeoutMs, intervalMs: 500, ...whileRunning(registrationController) },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const startupSeconds = (performance.now() - started) / 1000;
  log(`OCM hub (registration controller, work manager) ready in ${startupSeconds.toFixed(1)} s`);
  return {
    cluster: hub,
    registrationController,
    workManager,
    bootstrapKubeconfigPath,
    binaries: { registration: ocmRegistration, work: ocmWork, ocmSourceDir },
    startupSeconds,
    crashed: () => !stopping && processes.some((managed) => managed.exitStatus() !== undefined),
    stop,
  };
}
