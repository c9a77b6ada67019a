// A real, local Kubernetes control plane for tests: etcd, kube-apiserver,
// kube-controller-manager and (optionally) Metacontroller, built from Go modules (see
// binaries.ts) and started on free 127.0.0.1 ports in a temporary directory. No Docker, no
// kubelet: nothing here runs Pods, but every API object is validated, admitted, stored,
// garbage-collected and reconciled by the real upstream code.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { auditLogArgs, serviceAccountUserName, type AuditLogOption } from './audit.js';
import { ensureBinaries, type BuiltBinaries } from './binaries.js';
import {
  createCertificateAuthority,
  createServiceAccountKeys,
  issueCertificate,
  type KeyAndCertificate,
} from './certs.js';
import { installCrds, type Kubectl } from './crds.js';
import { writeKubeconfig, writeTokenKubeconfig } from './kubeconfig.js';
import { metacontrollerCrdsFile } from './paths.js';
import { freeLoopbackPorts } from './ports.js';
import {
  describeExit,
  logTail,
  runCommand,
  startManagedProcess,
  type CommandResult,
  type ManagedProcess,
} from './processes.js';
import { waitForHttpOk } from './readiness.js';
import type { PinnedVersions } from './versions.js';

export interface ClusterIdentity {
  /** Kubernetes user name (certificate CN). */
  userName: string;
  /** Kubernetes groups (certificate O). */
  groups: readonly string[];
}

export interface MetacontrollerOptions {
  /**
   * Passed as `--apply-strategy=<value>`; the Metacontroller docs recommend
   * `server-side-apply`. Omitted: Metacontroller's default (its dynamic apply).
   */
  applyStrategy?: string;
  /**
   * How often Metacontroller re-reads API discovery, i.e. how soon it notices CRDs installed
   * after it started. Its default (30s) would make every test wait; default here: 2s.
   */
  discoveryInterval?: string;
  /**
   * Identity Metacontroller runs as: a certificate identity (default: a member of
   * system:masters) or a ServiceAccount, whose namespace and account are created and whose
   * bound token (TokenRequest API) Metacontroller then authenticates with.
   */
  identity?: ClusterIdentity | { serviceAccount: ServiceAccountRef };
  /** controller-runtime's --zap-log-level (`info`, `debug`, or a number: 4 shows every sync). */
  logLevel?: string;
  /** Further command-line flags, appended last (so they win). */
  extraArgs?: readonly string[];
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

export interface RunningMetacontroller {
  process: ManagedProcess;
  /** controller-runtime's health probe. */
  readyzUrl: string;
  /** Prometheus metrics (metacontroller_* and controller-runtime's). */
  metricsUrl: string;
  kubeconfigPath: string;
}

export interface ControlPlaneOptions {
  /**
   * Metacontroller options to start it with the control plane; `false` or absent: not started
   * (call `startMetacontroller()` once its RBAC and hook server are in place).
   */
  metacontroller?: false | MetacontrollerOptions;
  /** Appended to kube-apiserver's flags. */
  extraApiserverArgs?: readonly string[];
  /**
   * Write kube-apiserver's audit log (JSON lines, one event per request: audit.ts) to
   * `ControlPlane.auditLogFile`, of every request or of the users named. Default: no audit log.
   */
  auditLog?: AuditLogOption;
  /** Appended to kube-controller-manager's flags. */
  extraControllerManagerArgs?: readonly string[];
  /**
   * Run kube-controller-manager's CSR signing controller with this cluster's client CA (the one
   * the apiserver trusts, --client-ca-file) as --cluster-signing-cert-file/-key-file, so an
   * approved CertificateSigningRequest for kubernetes.io/kube-apiserver-client gets a client
   * certificate, as on a kubeadm cluster. OCM's registration agent joins a hub that way (ocm.ts).
   * Default false.
   */
  signClientCertificates?: boolean;
  /** How long each component may take to become ready; default 60 s (slow 2-core CI). */
  readinessTimeoutMs?: number;
  /** Already built binaries; default: ensureBinaries() (builds them if needed). */
  binaries?: BuiltBinaries;
  /** Progress lines; default: stderr. */
  log?: (line: string) => void;
}

export interface ControlPlane {
  /** Kubeconfig of a cluster administrator (group system:masters). */
  kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  apiserverUrl: string;
  /** CA that signed the apiserver serving certificate and every client certificate. */
  caCertFile: string;
  /** kube-controller-manager signs approved client CSRs with that CA (`signClientCertificates`). */
  signsClientCertificates: boolean;
  binDir: string;
  binaries: BuiltBinaries;
  versions: PinnedVersions;
  /** Temporary directory holding data, certificates and logs. */
  dir: string;
  /** One `<component>.log` per process. */
  logDir: string;
  /** kube-apiserver's audit log, when the `auditLog` option asked for one. */
  auditLogFile?: string;
  processes: {
    etcd: ManagedProcess;
    kubeApiserver: ManagedProcess;
    kubeControllerManager: ManagedProcess;
    metacontroller?: ManagedProcess;
  };
  /** Metacontroller, when the `metacontroller` option started it with the control plane. */
  metacontroller?: RunningMetacontroller;
  /**
   * Starts Metacontroller against this control plane (for callers that must install RBAC or
   * CRDs first); it is stopped with the control plane, before the apiserver.
   */
  startMetacontroller(options?: MetacontrollerOptions): Promise<RunningMetacontroller>;
  /** Runs kubectl against this cluster as the administrator. Never throws on a non-zero exit. */
  kubectl: Kubectl;
  /** Writes a kubeconfig for another identity, e.g. to check RBAC as a restricted user. */
  kubeconfigFor(identity: ClusterIdentity): Promise<string>;
  /**
   * Creates the namespace and ServiceAccount if needed and writes a kubeconfig with a bound
   * token of it (TokenRequest API), as a pod running as that account would authenticate.
   */
  kubeconfigForServiceAccount(account: ServiceAccountRef): Promise<string>;
  /** Seconds from startControlPlane() until everything was ready (binaries excluded). */
  startupSeconds: number;
  /**
   * Stops every process (whole process groups). The directory is removed unless
   * `keepLogs` is set, a process died on its own, or KUBECELL_KEEP_CLUSTER_LOGS=1; when it is
   * kept, its path is printed.
   */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
}

// The Service IP range; the apiserver takes its first address for the `kubernetes` Service.
const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';
const KUBERNETES_SERVICE_IP = '10.0.0.1';

// Controllers that matter without nodes: deleting dependents and namespaces, quota
// accounting, default ServiceAccounts with their tokens and the kube-root-ca.crt ConfigMap.
const CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'resourcequota-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  // Fills the built-in admin/edit/view roles from ClusterRoles labelled to aggregate into them
  // (KubeCell's tenant roles, manifests/rbac/tenant-roles.yaml), as on every real cluster.
  'clusterrole-aggregation-controller',
];

const ADMISSION_PLUGINS = [
  'NamespaceLifecycle',
  'ServiceAccount',
  'LimitRanger',
  'ResourceQuota',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
];

function defaultLog(line: string): void {
  process.stderr.write(`[control-plane] ${line}\n`);
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? defaultLog;
  const binaries = options.binaries ?? (await ensureBinaries({ log }));
  // Free ports are found by binding and releasing them, so another program (e.g. a second
  // test run on the same machine) can take one before our server binds it. That is worth one
  // more attempt with fresh ports; any other failure is reported at once.
  try {
    return await startControlPlaneOnce(options, binaries, log);
  } catch (error) {
    if (!(error instanceof Error) || !/address already in use/i.test(error.message)) throw error;
    log('a port was taken by someone else meanwhile; starting again on other ports');
    return startControlPlaneOnce(options, binaries, log);
  }
}

async function startControlPlaneOnce(
  options: ControlPlaneOptions,
  binaries: BuiltBinaries,
  log: (line: string) => void,
): Promise<ControlPlane> {
  const readinessTimeoutMs = options.readinessTimeoutMs ?? 60_000;
  const started = performance.now();
  const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(1)} s`;

  const dir = mkdtempSync(path.join(os.tmpdir(), 'kubecell-control-plane-'));
  const logDir = path.join(dir, 'logs');
  const pkiDir = path.join(dir, 'pki');
  for (const subdir of [logDir, pkiDir]) mkdirSync(subdir, { recursive: true });
  const running: ManagedProcess[] = [];

  const stopAll = async (keep: boolean): Promise<void> => {
    // A process that is already gone before we stop anything died on its own: keep its log.
    const crashed = running.filter((managed) => managed.exitStatus() !== undefined);
    // Reverse start order: clients first, etcd last, so nothing logs spurious connection errors.
    for (const managed of [...running].reverse()) await managed.stop();
    if (keep || crashed.length > 0 || process.env.KUBECELL_KEEP_CLUSTER_LOGS === '1') {
      log(`control-plane logs kept in ${logDir}`);
    } else {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  try {
    const [etcdClientPort, etcdPeerPort, apiserverPort, controllerManagerPort] =
      (await freeLoopbackPorts(4)) as [number, number, number, number];
    const apiserverUrl = `https://127.0.0.1:${apiserverPort}`;

    // --- certificates and keys -------------------------------------------------------------
    const ca = await createCertificateAuthority(pkiDir, 'ca', 'kubecell-test-ca');
    // A separate CA for the authenticating front proxy (request-header authentication), as in
    // kubeadm. Without it every delegating component (kube-controller-manager, aggregated API
    // servers) logs "missing content for CA bundle ... requestheader-client-ca-file" forever.
    const frontProxyCa = await createCertificateAuthority(
      pkiDir,
      'front-proxy-ca',
      'kubecell-test-front-proxy-ca',
    );
    const [apiserverServing, admin, controllerManagerClient, frontProxyClient, serviceAccountKeys] =
      await Promise.all([
        issueCertificate(ca, pkiDir, {
          name: 'kube-apiserver',
          commonName: 'kube-apiserver',
          usage: 'server',
          ipAddresses: ['127.0.0.1', KUBERNETES_SERVICE_IP],
          dnsNames: [
            'localhost',
            'kubernetes',
            'kubernetes.default',
            'kubernetes.default.svc',
            'kubernetes.default.svc.cluster.local',
          ],
        }),
        issueCertificate(ca, pkiDir, {
          name: 'admin',
          commonName: 'kubecell-test-admin',
          organizations: ['system:masters'],
          usage: 'client',
        }),
        // The user name the bootstrap RBAC policy grants kube-controller-manager's permissions to.
        issueCertificate(ca, pkiDir, {
          name: 'kube-controller-manager',
          commonName: 'system:kube-controller-manager',
          usage: 'client',
        }),
        issueCertificate(frontProxyCa, pkiDir, {
          name: 'front-proxy-client',
          commonName: 'front-proxy-client',
          usage: 'client',
        }),
        createServiceAccountKeys(pkiDir),
      ]);
    const kubeconfigFor = async (identity: ClusterIdentity, fileName?: string): Promise<string> => {
      const safeName = identity.userName.replace(/[^A-Za-z0-9_.-]/g, '_');
      const client: KeyAndCertificate = await issueCertificate(ca, pkiDir, {
        name: `client-${safeName}`,
        commonName: identity.userName,
        organizations: identity.groups,
        usage: 'client',
      });
      return writeKubeconfig({
        file: path.join(dir, fileName ?? `${safeName}.kubeconfig`),
        serverUrl: apiserverUrl,
        caCertFile: ca.certFile,
        client,
        userName: identity.userName,
      });
    };
    const kubeconfigPath = writeKubeconfig({
      file: path.join(dir, 'admin.kubeconfig'),
      serverUrl: apiserverUrl,
      caCertFile: ca.certFile,
      client: admin,
      userName: 'kubecell-test-admin',
    });
    const controllerManagerKubeconfig = writeKubeconfig({
      file: path.join(dir, 'kube-controller-manager.kubeconfig'),
      serverUrl: apiserverUrl,
      caCertFile: ca.certFile,
      client: controllerManagerClient,
      userName: 'system:kube-controller-manager',
    });
    log(`certificates ready (${elapsed()})`);

    // --- etcd ----------------------------------------------------------------------------------
    const etcdClientUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcdPeerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcd = startManagedProcess({
      name: 'etcd',
      command: binaries.etcd,
      logDir,
      args: [
        '--name=kubecell-test',
        `--data-dir=${path.join(dir, 'etcd-data')}`,
        `--listen-client-urls=${etcdClientUrl}`,
        `--advertise-client-urls=${etcdClientUrl}`,
        `--listen-peer-urls=${etcdPeerUrl}`,
        `--initial-advertise-peer-urls=${etcdPeerUrl}`,
        `--initial-cluster=kubecell-test=${etcdPeerUrl}`,
        // Test data is thrown away; fsync on every write only makes a slow disk slower.
        '--unsafe-no-fsync=true',
      ],
    });
    running.push(etcd);
    await waitForHttpOk(
      'etcd /health',
      `${etcdClientUrl}/health`,
      {},
      { timeoutMs: readinessTimeoutMs, process: etcd },
    );
    log(`etcd ${binaries.versions.etcd.version} ready on ${etcdClientUrl} (${elapsed()})`);

    // --- kube-apiserver ------------------------------------------------------------------------
    const auditLogFile = options.auditLog ? path.join(logDir, 'audit.log') : undefined;
    const kubeApiserver = startManagedProcess({
      name: 'kube-apiserver',
      command: binaries.kubeApiserver,
      logDir,
      args: [
        `--etcd-servers=${etcdClientUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiserverPort}`,
        `--tls-cert-file=${apiserverServing.certFile}`,
        `--tls-private-key-file=${apiserverServing.keyFile}`,
        `--client-ca-file=${ca.certFile}`,
        '--authorization-mode=Node,RBAC',
        `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
        // The endpoint of the `kubernetes` Service would be 127.0.0.1, which Endpoints
        // validation rejects (loopback); without reconciliation the apiserver doesn't retry forever.
        '--endpoint-reconciler-type=none',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${serviceAccountKeys.publicKeyFile}`,
        `--service-account-signing-key-file=${serviceAccountKeys.privateKeyFile}`,
        `--enable-admission-plugins=${ADMISSION_PLUGINS.join(',')}`,
        '--allow-privileged=true',
        `--requestheader-client-ca-file=${frontProxyCa.certFile}`,
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--proxy-client-cert-file=${frontProxyClient.certFile}`,
        `--proxy-client-key-file=${frontProxyClient.keyFile}`,
        `--cert-dir=${path.join(dir, 'kube-apiserver-certs')}`,
        ...(options.auditLog && auditLogFile
          ? auditLogArgs(options.auditLog, dir, auditLogFile)
          : []),
        ...(options.extraApiserverArgs ?? []),
      ],
    });
    running.push(kubeApiserver);
    const adminTls = { caCertFile: ca.certFile, certFile: admin.certFile, keyFile: admin.keyFile };
    await waitForHttpOk('kube-apiserver /readyz', `${apiserverUrl}/readyz`, adminTls, {
      timeoutMs: readinessTimeoutMs,
      process: kubeApiserver,
    });
    log(`kube-apiserver ready on ${apiserverUrl} (${elapsed()})`);

    // --- kube-controller-manager ---------------------------------------------------------------
    const kubeControllerManager = startManagedProcess({
      name: 'kube-controller-manager',
      command: binaries.kubeControllerManager,
      logDir,
      args: [
        `--kubeconfig=${controllerManagerKubeconfig}`,
        `--authentication-kubeconfig=${controllerManagerKubeconfig}`,
        `--authorization-kubeconfig=${controllerManagerKubeconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${controllerManagerPort}`,
        `--cert-dir=${path.join(dir, 'kube-controller-manager-certs')}`,
        '--leader-elect=false',
        `--controllers=${[
          ...CONTROLLERS,
          ...(options.signClientCertificates
            ? ['certificatesigningrequest-signing-controller']
            : []),
        ].join(',')}`,
        ...(options.signClientCertificates
          ? [
              `--cluster-signing-cert-file=${ca.certFile}`,
              `--cluster-signing-key-file=${ca.keyFile}`,
            ]
          : []),
        // Like kubeadm: every controller acts as its own ServiceAccount in kube-system and so
        // gets the bootstrap system:controller:* role made for it. KCM's own user alone may not,
        // e.g., empty a namespace that is being deleted.
        '--use-service-account-credentials=true',
        `--root-ca-file=${ca.certFile}`,
        `--service-account-private-key-file=${serviceAccountKeys.privateKeyFile}`,
        `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
        ...(options.extraControllerManagerArgs ?? []),
      ],
    });
    running.push(kubeControllerManager);
    // Its serving certificate is self-signed (generated in --cert-dir); /healthz needs no auth.
    await waitForHttpOk(
      'kube-controller-manager /healthz',
      `https://127.0.0.1:${controllerManagerPort}/healthz`,
      { insecure: true },
      { timeoutMs: readinessTimeoutMs, process: kubeControllerManager },
    );
    log(`kube-controller-manager ready (${elapsed()})`);

    const kubectlCacheDir = path.join(dir, 'kubectl-cache');
    const kubectlAs =
      (kubeconfig: string): Kubectl =>
      (args, kubectlOptions = {}): Promise<CommandResult> =>
        runCommand(
          binaries.kubectl,
          [`--kubeconfig=${kubeconfig}`, `--cache-dir=${kubectlCacheDir}`, ...args],
          {
            input: kubectlOptions.input,
            timeoutMs: 120_000,
          },
        );
    const kubectl = kubectlAs(kubeconfigPath);

    // --- Metacontroller ------------------------------------------------------------------------
    const processes: ControlPlane['processes'] = { etcd, kubeApiserver, kubeControllerManager };
    const serviceAccountKubeconfig = async (account: ServiceAccountRef): Promise<string> => {
      for (const [kind, name] of [
        ['namespace', account.namespace],
        ['serviceaccount', account.name],
      ] as const) {
        const created = await kubectl([
          'create',
          kind,
          name,
          ...(kind === 'serviceaccount' ? ['-n', account.namespace] : []),
        ]);
        // kubectl says AlreadyExists for a namespace, `already exists` for a ServiceAccount.
        if (created.code !== 0 && !/AlreadyExists|already exists/.test(created.stderr)) {
          throw new Error(`creating ${kind} ${name} failed: ${created.stderr}`);
        }
      }
      // A bound token from the TokenRequest API, as a pod of that ServiceAccount would get.
      const token = await kubectl([
        'create',
        'token',
        account.name,
        '-n',
        account.namespace,
        '--duration=48h',
      ]);
      if (token.code !== 0) throw new Error(`kubectl create token failed: ${token.stderr}`);
      return writeTokenKubeconfig({
        file: path.join(dir, `${account.namespace}-${account.name}.kubeconfig`),
        serverUrl: apiserverUrl,
        caCertFile: ca.certFile,
        token: token.stdout.trim(),
        userName: serviceAccountUserName(account),
      });
    };
    const startMetacontroller = async (
      metacontrollerOptions: MetacontrollerOptions = {},
    ): Promise<RunningMetacontroller> => {
      const [healthPort, metricsPort] = (await freeLoopbackPorts(2)) as [number, number];
      // Its informers for CompositeController/DecoratorController need the CRDs to exist.
      await installCrds(kubectl, [metacontrollerCrdsFile], Math.ceil(readinessTimeoutMs / 1000));
      const identity = metacontrollerOptions.identity ?? {
        userName: 'metacontroller',
        groups: ['system:masters'],
      };
      const metacontrollerKubeconfig =
        'serviceAccount' in identity
          ? await serviceAccountKubeconfig(identity.serviceAccount)
          : await kubeconfigFor(identity, 'metacontroller.kubeconfig');
      const managed = startManagedProcess({
        name: 'metacontroller',
        command: binaries.metacontroller,
        logDir,
        // controller-runtime's GetConfig reads --kubeconfig, then $KUBECONFIG.
        env: { ...process.env, KUBECONFIG: metacontrollerKubeconfig },
        args: [
          `--kubeconfig=${metacontrollerKubeconfig}`,
          `--discovery-interval=${metacontrollerOptions.discoveryInterval ?? '2s'}`,
          `--health-probe-bind-address=127.0.0.1:${healthPort}`,
          `--metrics-address=127.0.0.1:${metricsPort}`,
          `--zap-log-level=${metacontrollerOptions.logLevel ?? 'info'}`,
          ...(metacontrollerOptions.applyStrategy
            ? [`--apply-strategy=${metacontrollerOptions.applyStrategy}`]
            : []),
          ...(metacontrollerOptions.extraArgs ?? []),
        ],
      });
      // A Metacontroller started again replaces the one stopped on purpose: its exit is no crash.
      const replaced = processes.metacontroller;
      const index = replaced === undefined ? -1 : running.indexOf(replaced);
      if (index >= 0 && replaced?.exitStatus() !== undefined) running.splice(index, 1);
      running.push(managed);
      processes.metacontroller = managed;
      const readyzUrl = `http://127.0.0.1:${healthPort}/readyz`;
      await waitForHttpOk(
        'Metacontroller /readyz',
        readyzUrl,
        {},
        { timeoutMs: readinessTimeoutMs, process: managed },
      );
      log(`Metacontroller ${binaries.versions.metacontroller.version} ready (${elapsed()})`);
      return {
        process: managed,
        readyzUrl,
        metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
        kubeconfigPath: metacontrollerKubeconfig,
      };
    };
    const metacontroller =
      options.metacontroller === undefined || options.metacontroller === false
        ? undefined
        : await startMetacontroller(options.metacontroller);

    const startupSeconds = (performance.now() - started) / 1000;
    log(`control plane ready in ${startupSeconds.toFixed(1)} s; kubeconfig ${kubeconfigPath}`);
    let stopped = false;
    return {
      kubeconfigPath,
      apiserverUrl,
      caCertFile: ca.certFile,
      signsClientCertificates: options.signClientCertificates ?? false,
      binDir: binaries.binDir,
      binaries,
      versions: binaries.versions,
      dir,
      logDir,
      ...(auditLogFile ? { auditLogFile } : {}),
      processes,
      ...(metacontroller ? { metacontroller } : {}),
      startMetacontroller,
      kubectl,
      kubeconfigFor: (identity) => kubeconfigFor(identity),
      kubeconfigForServiceAccount: serviceAccountKubeconfig,
      startupSeconds,
      async stop(stopOptions = {}): Promise<void> {
        if (stopped) return;
        stopped = true;
        await stopAll(stopOptions.keepLogs ?? false);
      },
    };
  } catch (error) {
    await stopAll(true);
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`starting the control plane failed: ${message}\n(all logs: ${logDir})`, {
      cause: error,
    });
  }
}

/** Throws, with its log, unless Metacontroller is running in this control plane. */
export function requireMetacontroller(controlPlane: ControlPlane): ManagedProcess {
  const metacontroller = controlPlane.processes.metacontroller;
  if (!metacontroller) {
    throw new Error('Metacontroller was not started in this control plane');
  }
  const exit = metacontroller.exitStatus();
  if (exit) {
    throw new Error(
      `Metacontroller ${describeExit(exit)}; log ${metacontroller.logFile}:\n${logTail(metacontroller.logFile)}`,
    );
  }
  return metacontroller;
}
