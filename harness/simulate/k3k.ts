// SIMULATED k3k controller: for every k3k Cluster it serves, it writes what k3k (v1.1) writes
// when the virtual cluster's server is up, and nothing runs:
//
// - the Cluster's status (`k3k.io/v1beta1`, status subresource): phase Ready and condition
//   Ready=True, reason Provisioned (k3k's pkg/controller/cluster/status.go), plus hostVersion,
//   CIDRs and tlsSANs. hooks/virtualcluster/status.ts (k3kReadyCondition) reads the Ready condition,
//   or the phase when there is no condition;
// - the admin kubeconfig Secret `k3k-<cluster>-kubeconfig` in the Cluster's namespace (k3k's
//   SafeConcatNameWithPrefix, shortened with a hash past 63 characters), key `kubeconfig.yaml`,
//   laid out as client-go's clientcmd.Write lays it out, owned by the Cluster.
//   hooks/virtualcluster/observe.ts relates it and hooks/virtualcluster/kubeconfig.ts rewrites
//   its server to the NodePort endpoint. Its certificates are FAKE: PEM-shaped text that says it
//   is simulated, base64-encoded like real data; nothing can connect with it.
//
// With `provisioningMs` > 0 a Cluster first goes through phase Provisioning (Ready=False, reason
// Provisioning), as k3k reports while its server pod starts.
import { createHash } from 'node:crypto';
import { KubeClient, isNotFound, resourcePath, type KubeObject } from './kube-client.js';
import { poll } from '../poll.js';
import { PollingActor, setConditions, type Condition, type Log } from './support.js';

export const K3K_FIELD_MANAGER = 'simulated-k3k';
export const K3K_API_VERSION = 'k3k.io/v1beta1';
export const K3K_KUBECONFIG_KEY = 'kubeconfig.yaml';

/**
 * k3k's SafeConcatName: the non-empty parts joined with `-`; from 64 characters on, the first
 * 57 characters (56 when the 57th is not a lowercase letter or digit), `-`, and the first 5 (6)
 * hex digits of the SHA-256 of the full name.
 */
export function k3kSafeConcatName(...parts: string[]): string {
  const full = parts.filter((part) => part !== '').join('-');
  if (full.length < 64) return full;
  const digest = createHash('sha256').update(full).digest('hex');
  return /[a-z0-9]/.test(full.charAt(56))
    ? `${full.slice(0, 57)}-${digest.slice(0, 5)}`
    : `${full.slice(0, 56)}-${digest.slice(0, 6)}`;
}

/** `k3k-<cluster>-kubeconfig` (k3k's SafeConcatNameWithPrefix). */
export function k3kKubeconfigSecretName(clusterName: string): string {
  return k3kSafeConcatName('k3k', clusterName, 'kubeconfig');
}

function fakePem(label: string, what: string): string {
  const body = Buffer.from(
    `SIMULATED ${what} written by KubeCell's harness/simulate/k3k.ts; not a real key or certificate.`,
    'utf8',
  )
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trimEnd();
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/**
 * A kubeconfig as k3k writes it (clientcmd.Write's layout: one cluster, context and user named
 * `default`), with FAKE certificate data. Pure.
 */
export function renderK3kKubeconfig(server: string): string {
  return [
    'apiVersion: v1',
    'clusters:',
    '- cluster:',
    `    certificate-authority-data: ${base64(fakePem('CERTIFICATE', 'k3k server CA'))}`,
    `    server: ${server}`,
    '  name: default',
    'contexts:',
    '- context:',
    '    cluster: default',
    '    user: default',
    '  name: default',
    'current-context: default',
    'kind: Config',
    'preferences: {}',
    'users:',
    '- name: default',
    '  user:',
    `    client-certificate-data: ${base64(fakePem('CERTIFICATE', 'k3k admin client certificate'))}`,
    `    client-key-data: ${base64(fakePem('EC PRIVATE KEY', 'k3k admin client key'))}`,
    '',
  ].join('\n');
}

/** The in-cluster URL k3k puts in its kubeconfig: its server Service, port 443. */
export function k3kServerUrl(namespace: string, clusterName: string): string {
  return `https://${k3kSafeConcatName('k3k', clusterName, 'service')}.${namespace}.svc:443`;
}

export interface K3kClusterObject extends KubeObject {
  spec?: { tlsSANs?: string[]; [field: string]: unknown };
  status?: { phase?: string; conditions?: Condition[]; [field: string]: unknown };
}

export function k3kClusterPath(namespace?: string, name?: string): string {
  return resourcePath({
    apiVersion: K3K_API_VERSION,
    resource: 'clusters',
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
  });
}

/** The admin kubeconfig Secret k3k writes for a Cluster, owned by it (pure). */
export function renderKubeconfigSecret(cluster: K3kClusterObject): KubeObject {
  const namespace = cluster.metadata.namespace ?? 'default';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: k3kKubeconfigSecretName(cluster.metadata.name),
      namespace,
      annotations: { 'kubecell.io/simulated-by': 'harness/simulate/k3k.ts (fake certificates)' },
      ...(cluster.metadata.uid
        ? {
            ownerReferences: [
              {
                apiVersion: K3K_API_VERSION,
                kind: 'Cluster',
                name: cluster.metadata.name,
                uid: cluster.metadata.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    type: 'Opaque',
    data: {
      [K3K_KUBECONFIG_KEY]: base64(
        renderK3kKubeconfig(k3kServerUrl(namespace, cluster.metadata.name)),
      ),
    },
  };
}

export type K3kPhase = 'Provisioning' | 'Ready';

/** The status k3k writes for a Cluster in `phase`, keeping unchanged transition times (pure). */
export function k3kClusterStatus(
  cluster: K3kClusterObject,
  phase: K3kPhase,
  now: Date,
  hostVersion = 'v1.35.4',
): Record<string, unknown> {
  const ready = phase === 'Ready';
  return {
    phase,
    hostVersion,
    clusterCIDR: '10.42.0.0/16',
    serviceCIDR: '10.43.0.0/16',
    clusterDNS: '10.43.0.10',
    ...(cluster.spec?.tlsSANs ? { tlsSANs: cluster.spec.tlsSANs } : {}),
    conditions: setConditions(
      cluster.status?.conditions,
      [
        ready
          ? {
              type: 'Ready',
              status: 'True',
              reason: 'Provisioned',
              message: 'Cluster successfully provisioned',
              ...(cluster.metadata.generation
                ? { observedGeneration: cluster.metadata.generation }
                : {}),
            }
          : {
              type: 'Ready',
              status: 'False',
              reason: 'Provisioning',
              message: 'server is not ready yet (simulated)',
              ...(cluster.metadata.generation
                ? { observedGeneration: cluster.metadata.generation }
                : {}),
            },
      ],
      now,
    ),
  };
}

export interface ServedCluster {
  namespace: string;
  name: string;
  uid: string;
  /** The Cluster's creationTimestamp (second precision, from the apiserver). */
  createdAt?: Date;
  /** When this actor first saw the Cluster. */
  seenAt: Date;
  /** When the Ready status and the kubeconfig Secret were written. */
  servedAt: Date;
}

/**
 * Serves one Cluster now: writes its kubeconfig Secret, then its Ready status. For tests that
 * control the timing themselves.
 */
export async function serveCluster(
  client: KubeClient,
  namespace: string,
  name: string,
  options: { now?: Date } = {},
): Promise<ServedCluster> {
  const seenAt = options.now ?? new Date();
  const cluster = await client.get<K3kClusterObject>(k3kClusterPath(namespace, name));
  return serve(client, cluster, seenAt, options.now);
}

async function serve(
  client: KubeClient,
  cluster: K3kClusterObject,
  seenAt: Date,
  now?: Date,
): Promise<ServedCluster> {
  const namespace = cluster.metadata.namespace ?? 'default';
  // k3k writes the kubeconfig once the server answers, and reports Ready after that.
  await client.apply(renderKubeconfigSecret(cluster), K3K_FIELD_MANAGER);
  await writeStatus(client, cluster, 'Ready', now ?? new Date());
  const created = cluster.metadata.creationTimestamp;
  return {
    namespace,
    name: cluster.metadata.name,
    uid: cluster.metadata.uid ?? '',
    ...(created ? { createdAt: new Date(created) } : {}),
    seenAt,
    servedAt: new Date(),
  };
}

async function writeStatus(
  client: KubeClient,
  cluster: K3kClusterObject,
  phase: K3kPhase,
  now: Date,
): Promise<void> {
  await client.patchStatus(
    k3kClusterPath(cluster.metadata.namespace, cluster.metadata.name),
    { status: k3kClusterStatus(cluster, phase, now) },
    K3K_FIELD_MANAGER,
  );
}

export interface K3kSimulatorOptions {
  /** How often all Clusters are listed; default 500 ms. */
  intervalMs?: number;
  /** Time in phase Provisioning before Ready; default 0 (served at first sight). */
  provisioningMs?: number;
  /** Serve only Clusters this returns true for; default all. */
  filter?: (cluster: K3kClusterObject) => boolean;
  log?: Log;
}

function key(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/**
 * The k3k controller loop: lists every k3k Cluster in every namespace each `intervalMs` and
 * serves each one it has not served yet (by UID: a Cluster recreated under the same name is
 * served again). A Cluster being deleted is left alone (k3k's own cleanup is not simulated; the
 * kubeconfig Secret goes with its owner through the garbage collector).
 */
export class K3kSimulator extends PollingActor<K3kSimulatorOptions> {
  private readonly seen = new Map<string, Date>();
  private readonly servedByUid = new Map<string, ServedCluster>();
  /** Served Clusters that still exist, by `namespace/name`. */
  readonly served = new Map<string, ServedCluster>();
  /** Every Cluster served since start, in order (deleted ones included), for timing reports. */
  readonly history: ServedCluster[] = [];

  constructor(client: KubeClient, options: K3kSimulatorOptions = {}) {
    super(client, options, 'k3k simulator', 500);
  }

  /** One pass over all Clusters (what each tick does); resolves when its writes are done. */
  async pollOnce(): Promise<void> {
    let clusters: K3kClusterObject[];
    try {
      clusters = await this.client.list<K3kClusterObject>(k3kClusterPath());
    } catch (error) {
      if (isNotFound(error)) return; // k3k's CRD is not installed (yet).
      throw error;
    }
    const now = new Date();
    const present = new Set(clusters.map((cluster) => cluster.metadata.uid ?? ''));
    for (const uid of [...this.seen.keys()]) {
      if (present.has(uid)) continue;
      this.seen.delete(uid);
      const gone = this.servedByUid.get(uid);
      this.servedByUid.delete(uid);
      if (gone && this.served.get(key(gone.namespace, gone.name))?.uid === uid) {
        this.served.delete(key(gone.namespace, gone.name));
      }
    }
    for (const cluster of clusters) {
      const uid = cluster.metadata.uid ?? '';
      if (cluster.metadata.deletionTimestamp || this.servedByUid.has(uid)) continue;
      if (this.options.filter && !this.options.filter(cluster)) continue;
      const seenAt = this.seen.get(uid) ?? now;
      if (!this.seen.has(uid)) this.seen.set(uid, seenAt);
      const provisioningMs = this.options.provisioningMs ?? 0;
      if (now.getTime() - seenAt.getTime() < provisioningMs) {
        if (cluster.status?.phase !== 'Provisioning') {
          await writeStatus(this.client, cluster, 'Provisioning', now);
        }
        continue;
      }
      try {
        const served = await serve(this.client, cluster, seenAt);
        this.servedByUid.set(uid, served);
        this.served.set(key(cluster.metadata.namespace, cluster.metadata.name), served);
        this.history.push(served);
      } catch (error) {
        // Deleted meanwhile: nothing to serve.
        if (!isNotFound(error)) throw error;
      }
    }
  }

  /** Resolves once the Cluster `namespace/name` is served (polling this simulator's record). */
  waitForServed(namespace: string, name: string, timeoutMs = 30_000): Promise<ServedCluster> {
    return poll(
      `k3k Cluster ${namespace}/${name} to be served`,
      async () => {
        const served = this.served.get(key(namespace, name));
        return served ? { value: served } : { notYet: 'not served yet' };
      },
      { timeoutMs, intervalMs: 50 },
    );
  }
}
