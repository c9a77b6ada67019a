/**
 * The apiserver's share of a VirtualCluster's creation and deletion, without Metacontroller.
 *
 * How long the real kube-apiserver (test/cluster's control plane: etcd, kube-apiserver,
 * kube-controller-manager, upstream k3k CRD) takes to accept, by server-side apply as
 * Metacontroller does with --apply-strategy=server-side-apply, the children the VirtualCluster
 * sync hook renders, for 1 and for 50 VirtualClusters at once, and to delete them (UID
 * precondition, background propagation, as Metacontroller deletes a child the hook omits).
 * The whole path through the real Metacontroller, apply → Ready, is bench/metacontroller.ts.
 *
 * Each VirtualCluster's children are applied one after another (one Metacontroller worker
 * handles one parent at a time); the VirtualClusters run concurrently.
 */
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import type { VirtualCluster } from '../hooks/generated/types/index.js';
import type { KubernetesObject } from '../hooks/metacontroller/protocol.js';
import { syncVirtualCluster } from '../hooks/virtualcluster/sync.js';
import {
  acceptedRelated,
  CONFIG,
  hostNamespace,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  NOW,
  syncRequest,
  virtualCluster,
} from '../hooks/virtualcluster/testing.js';
import { startControlPlane, type ControlPlane } from '../harness/cluster/control-plane.js';
import { crdNamesIn, installCrds, upstreamCrdFiles } from '../harness/cluster/crds.js';
import { uid } from './bodies.js';

export interface Latencies {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface WaveResult {
  /** Wall time from the first request to the last answer. */
  wallMs: number;
  requests: number;
  latency: Latencies;
}

export interface ApiserverScenario {
  virtualClusters: number;
  repetitions: number;
  /** First sync after resolution: Cluster, ResourceQuota, LimitRange, Service (created). */
  create: WaveResult;
  /** Next sync, NodePort observed: the same four (unchanged) plus the kubeconfig Secret. */
  resync: WaveResult;
  /** DELETE of every child (UID precondition, background propagation) accepted. */
  deleteAccepted: WaveResult;
  /** Until every child is gone (GET answers 404). */
  deleteGoneMs: number;
  /** In-process time of the sync hook calls that rendered the children (both waves). */
  hookMs: number;
}

export interface ApiserverResult {
  measured: boolean;
  reason?: string;
  kubernetesVersion?: string;
  startupSeconds?: number;
  scenarios: ApiserverScenario[];
  /** Written by earlier versions, when Metacontroller could not be built (no longer set). */
  notMeasured?: string;
}

const FIELD_MANAGER = 'metacontroller';
const PLURALS: Record<string, string> = {
  Cluster: 'clusters',
  ResourceQuota: 'resourcequotas',
  LimitRange: 'limitranges',
  Service: 'services',
  Secret: 'secrets',
  Namespace: 'namespaces',
};

interface Client {
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; body: unknown }>;
}

function clientFor(cluster: ControlPlane): Client {
  const config = parse(readFileSync(cluster.kubeconfigPath, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  };
  const decode = (data: string | undefined) => Buffer.from(data ?? '', 'base64');
  const server = new URL(config.clusters[0]?.cluster.server ?? cluster.apiserverUrl);
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: 64,
    ca: decode(config.clusters[0]?.cluster['certificate-authority-data']),
    cert: decode(config.users[0]?.user['client-certificate-data']),
    key: decode(config.users[0]?.user['client-key-data']),
  });
  return {
    request: (method, path, body, contentType = 'application/json') =>
      new Promise((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = https.request(
          {
            agent,
            host: server.hostname,
            port: server.port,
            method,
            path,
            headers: {
              accept: 'application/json',
              ...(payload === undefined
                ? {}
                : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let parsed: unknown = text;
              try {
                parsed = JSON.parse(text);
              } catch {
                // not JSON
              }
              resolve({ status: res.statusCode ?? 0, body: parsed });
            });
          },
        );
        req.on('error', reject);
        req.end(payload);
      }),
  };
}

function objectPath(obj: KubernetesObject): string {
  const plural = PLURALS[obj.kind];
  if (plural === undefined) throw new Error(`no resource for kind ${obj.kind}`);
  const [group, version] = obj.apiVersion.includes('/')
    ? obj.apiVersion.split('/')
    : ['', obj.apiVersion];
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const ns = obj.metadata.namespace;
  return `${prefix}${ns ? `/namespaces/${ns}` : ''}/${plural}/${obj.metadata.name}`;
}

function latencies(samples: number[]): Latencies {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return {
    count: sorted.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: sorted[sorted.length - 1] ?? 0,
  };
}

/** Runs `work` for every item concurrently, each item's steps in order; returns the wave's figures. */
async function wave<T>(
  items: T[],
  steps: (item: T) => Array<() => Promise<void>>,
): Promise<WaveResult> {
  const samples: number[] = [];
  const start = performance.now();
  await Promise.all(
    items.map(async (item) => {
      for (const step of steps(item)) {
        const t0 = performance.now();
        await step();
        samples.push(performance.now() - t0);
      }
    }),
  );
  return {
    wallMs: performance.now() - start,
    requests: samples.length,
    latency: latencies(samples),
  };
}

/** Metacontroller adds its selector label to every child (generateSelector: true). */
function asMetacontrollerApplies(child: KubernetesObject, parentUid: string): KubernetesObject {
  const copy = structuredClone(child);
  copy.metadata.labels = { ...copy.metadata.labels, 'controller-uid': parentUid };
  return copy;
}

async function expectOk(
  what: string,
  answer: Promise<{ status: number; body: unknown }>,
): Promise<unknown> {
  const { status, body } = await answer;
  if (status < 200 || status >= 300)
    throw new Error(`${what}: ${status} ${JSON.stringify(body).slice(0, 800)}`);
  return body;
}

interface Tenant {
  namespace: string;
  vc: VirtualCluster;
  children: KubernetesObject[];
  uids: Map<string, string>;
}

async function scenario(
  client: Client,
  prefix: string,
  count: number,
): Promise<Omit<ApiserverScenario, 'repetitions'>> {
  const tenants: Tenant[] = [];
  for (let i = 0; i < count; i++) {
    const namespace = `${prefix}-${i}`;
    await expectOk(
      `create namespace ${namespace}`,
      client.request('POST', '/api/v1/namespaces', hostNamespace(namespace)),
    );
    tenants.push({
      namespace,
      vc: virtualCluster({ namespace, uid: uid(namespace) }),
      children: [],
      uids: new Map(),
    });
  }
  let hookMs = 0;
  const render = (tenant: Tenant, observed: KubernetesObject[], extra: KubernetesObject[]) => {
    const related = [
      ...acceptedRelated().filter((o) => o.kind !== 'Namespace'),
      hostNamespace(tenant.namespace),
      ...extra,
    ];
    const t0 = performance.now();
    const first = syncVirtualCluster(syncRequest(tenant.vc, related, observed), CONFIG, NOW);
    hookMs += performance.now() - t0;
    return first;
  };
  for (const tenant of tenants) {
    const first = render(tenant, [], []);
    tenant.vc = { ...tenant.vc, status: first.status } as VirtualCluster;
    tenant.children = first.children.map((child) =>
      asMetacontrollerApplies(child, tenant.vc.metadata.uid ?? ''),
    );
  }
  const apply = (child: KubernetesObject) => async () => {
    const body = (await expectOk(
      `apply ${child.kind} ${child.metadata.namespace}/${child.metadata.name}`,
      client.request(
        'PATCH',
        `${objectPath(child)}?fieldManager=${FIELD_MANAGER}&force=true`,
        child,
        'application/apply-patch+yaml',
      ),
    )) as KubernetesObject;
    return void body;
  };
  const create = await wave(tenants, (tenant) => tenant.children.map(apply));

  // What Metacontroller would observe next (its informers; not timed), then the next sync.
  for (const tenant of tenants) {
    const observed: KubernetesObject[] = [];
    for (const child of tenant.children) {
      observed.push(
        (await expectOk(
          `get ${child.kind}`,
          client.request('GET', objectPath(child)),
        )) as KubernetesObject,
      );
    }
    const next = render(tenant, observed, [
      k3kKubeconfigSecret(K3K_KUBECONFIG, tenant.namespace, tenant.vc.metadata.name),
    ]);
    tenant.children = next.children.map((child) =>
      asMetacontrollerApplies(child, tenant.vc.metadata.uid ?? ''),
    );
  }
  const resync = await wave(tenants, (tenant) => tenant.children.map(apply));

  for (const tenant of tenants) {
    for (const child of tenant.children) {
      const stored = (await expectOk(
        `get ${child.kind}`,
        client.request('GET', objectPath(child)),
      )) as KubernetesObject;
      tenant.uids.set(objectPath(child), stored.metadata.uid ?? '');
    }
  }
  const deleteAccepted = await wave(tenants, (tenant) =>
    tenant.children.map((child) => async () => {
      await expectOk(
        `delete ${child.kind}`,
        client.request('DELETE', objectPath(child), {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Background',
          preconditions: { uid: tenant.uids.get(objectPath(child)) },
        }),
      );
    }),
  );
  const goneStart = performance.now() - deleteAccepted.wallMs;
  for (;;) {
    const answers = await Promise.all(
      tenants.flatMap((tenant) =>
        tenant.children.map((child) => client.request('GET', objectPath(child))),
      ),
    );
    if (answers.every((answer) => answer.status === 404)) break;
    if (performance.now() - goneStart > 120_000)
      throw new Error('children still present 120 s after their deletion');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const deleteGoneMs = performance.now() - goneStart;
  for (const tenant of tenants) {
    await client.request('DELETE', `/api/v1/namespaces/${tenant.namespace}`);
  }
  return { virtualClusters: count, create, resync, deleteAccepted, deleteGoneMs, hookMs };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[(sorted.length - 1) >> 1] ?? 0;
}

/** The repetition with the median create wall time, so the figures of one run stay together. */
function medianRun(
  runs: Omit<ApiserverScenario, 'repetitions'>[],
): Omit<ApiserverScenario, 'repetitions'> {
  const target = median(runs.map((run) => run.create.wallMs));
  return (
    runs.find((run) => run.create.wallMs === target) ??
    (runs[0] as Omit<ApiserverScenario, 'repetitions'>)
  );
}

export async function runApiserverBenchmark(options: {
  log: (line: string) => void;
  single: number;
  many: number;
  manyRepetitions: number;
}): Promise<ApiserverResult> {
  let cluster: ControlPlane;
  try {
    cluster = await startControlPlane({
      metacontroller: false,
      log: (line) => options.log(`control plane: ${line}`),
    });
  } catch (err) {
    return {
      measured: false,
      reason: `the local control plane did not start: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      scenarios: [],
    };
  }
  try {
    const k3k = upstreamCrdFiles().filter((file) => crdNamesIn(file).includes('clusters.k3k.io'));
    await installCrds(cluster.kubectl, k3k);
    const client = clientFor(cluster);
    const version = (await client.request('GET', '/version')).body as { gitVersion?: string };
    const scenarios: ApiserverScenario[] = [];
    const singles = [];
    for (let r = 0; r < options.single; r++) {
      options.log(`apiserver: 1 VirtualCluster, repetition ${r + 1}/${options.single}`);
      singles.push(await scenario(client, `kb-one-${r}`, 1));
    }
    scenarios.push({ ...medianRun(singles), repetitions: options.single });
    const manyRuns = [];
    for (let r = 0; r < options.manyRepetitions; r++) {
      options.log(
        `apiserver: ${options.many} VirtualClusters at once, repetition ${r + 1}/${options.manyRepetitions}`,
      );
      manyRuns.push(await scenario(client, `kb-many-${r}`, options.many));
    }
    scenarios.push({ ...medianRun(manyRuns), repetitions: options.manyRepetitions });
    return {
      measured: true,
      kubernetesVersion: version.gitVersion,
      startupSeconds: cluster.startupSeconds,
      scenarios,
    };
  } finally {
    await cluster.stop();
  }
}
