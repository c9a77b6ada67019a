/**
 * The cases of the HTTP benchmark: every hook issue 25 names, each with the request
 * Metacontroller (or, for the admission webhook, the apiserver) sends it in steady state, and a
 * check that the answer is the steady state's and no error, so that no case measures a refusal.
 * test/bench/http-cases.test.ts posts every body (the Cell's at 10 Nodes) to the product app.
 */
import { cellSyncBody } from './bodies.js';
import { virtualClusterCreateReview } from './bodies-admission.js';
import {
  BENCH_VIRTUALCLUSTERS,
  classUsageSyncBody,
  deliverySyncBody,
  hostNamespaceSyncBody,
} from './bodies-decorators.js';
import { gpuCellPoolSyncBody } from './bodies-gpucellpool.js';
import { planSyncBody } from './bodies-plan.js';
import { virtualClusterSyncBody } from './bodies-virtualcluster.js';
import type { Json } from './stored.js';

/** Where a case is served: the hook server's HTTP port, or the webhook's HTTPS port. */
export type Listener = 'hooks' | 'webhook';

export interface HttpCase {
  /** The case's name in the results: the hook, and what sets its size when several do. */
  hook: string;
  path: string;
  listener: Listener;
  /** The request body, built when the case is about to run (a 5,000-Node Cell is 146 MB). */
  body(now: Date): Json;
  /** What makes `answer` not the steady state's answer to `body`; undefined when it is. */
  check(answer: Json, body: Json): string | undefined;
}

/** The Cells measured at every size the issue names (20 pods per Node). */
export const CELL_NODES = [10, 100, 1000, 5000] as const;

/** The Nodes of the Cell the VirtualClusters, plans and the webhook's lookups see. */
export const REFERENCE_CELL_NODES = 10;

type Answer = Json & {
  status?: Json & { phase?: string; conditions?: Array<{ type: string; status: string }> };
  children?: unknown[];
  attachments?: unknown[];
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
  response?: { allowed?: boolean; status?: { message?: string } };
};

const expect = (ok: boolean, problem: () => string): string | undefined =>
  ok ? undefined : problem();

const conditionTrue = (answer: Answer, type: string) =>
  answer.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;

const phase = (answer: Answer, wanted: string) =>
  expect(
    answer.status?.phase === wanted,
    () => `status.phase is ${answer.status?.phase}, not ${wanted}`,
  );

const count = (what: string, list: unknown[] | undefined, wanted: number) =>
  expect(list?.length === wanted, () => `${list?.length ?? 'no'} ${what}, not ${wanted}`);

/** Labels and annotations the answer sets that the object does not carry already. */
function decoratorChanges(answer: Answer, body: Json): string | undefined {
  const metadata = (body.object as { metadata: Record<string, Record<string, string>> }).metadata;
  for (const field of ['labels', 'annotations'] as const) {
    for (const [key, value] of Object.entries(answer[field] ?? {})) {
      const current = metadata[field]?.[key];
      if ((value ?? undefined) !== current) return `${field} ${key}: ${current} → ${value}`;
    }
  }
  return undefined;
}

function cellCase(nodes: number): HttpCase {
  return {
    hook: `cell/sync (${nodes.toLocaleString('en')} Nodes × 20 pods)`,
    path: '/hooks/cell/sync',
    listener: 'hooks',
    body: (now) => cellSyncBody({ nodes, podsPerNode: 20, hostNamespaces: 20 }, now),
    check: (answer: Answer) => phase(answer, 'Ready'),
  };
}

function gpuCellPoolCase(provisioner: 'KubeVirt' | 'ClusterAPI'): HttpCase {
  return {
    hook: `gpucellpool/sync (${provisioner === 'KubeVirt' ? 'KubeVirt' : 'Cluster API'})`,
    path: '/hooks/gpucellpool/sync',
    listener: 'hooks',
    body: (now) => gpuCellPoolSyncBody(provisioner, now),
    check: (answer: Answer) =>
      expect(
        conditionTrue(answer, 'Ready') &&
          answer.status?.readyReplicas === answer.status?.desiredReplicas,
        () => `the pool is not Ready: ${String(JSON.stringify(answer.status)).slice(0, 300)}`,
      ),
  };
}

function reviewCase(webhook: 'validate' | 'mutate'): HttpCase {
  return {
    hook: `admission/${webhook} (VirtualCluster CREATE)`,
    path: `/admission/${webhook}`,
    listener: 'webhook',
    body: () => virtualClusterCreateReview(webhook),
    check: (answer: Answer) =>
      expect(
        answer.response?.allowed === true,
        () => `the review was denied: ${answer.response?.status?.message}`,
      ),
  };
}

/** Every case, the Cell's at `cellNodes` (all of CELL_NODES by default). */
export function httpCases(cellNodes: readonly number[] = CELL_NODES): HttpCase[] {
  return [
    {
      hook: 'virtualcluster/sync',
      path: '/hooks/virtualcluster/sync',
      listener: 'hooks',
      body: virtualClusterSyncBody,
      check: (answer: Answer) => phase(answer, 'Ready') ?? count('children', answer.children, 5),
    },
    {
      hook: 'plan/sync',
      path: '/hooks/plan/sync',
      listener: 'hooks',
      body: (now) => planSyncBody(now, REFERENCE_CELL_NODES),
      check: (answer: Answer) =>
        expect(answer.status?.decision === 'Accepted', () => `decision ${answer.status?.decision}`),
    },
    ...cellNodes.map(cellCase),
    gpuCellPoolCase('KubeVirt'),
    gpuCellPoolCase('ClusterAPI'),
    {
      hook: 'host-namespace/sync',
      path: '/hooks/host-namespace/sync',
      listener: 'hooks',
      body: hostNamespaceSyncBody,
      check: (answer: Answer, body) =>
        count('NetworkPolicies', answer.attachments, 4) ?? decoratorChanges(answer, body),
    },
    {
      hook: 'class-usage/sync',
      path: '/hooks/class-usage/sync',
      listener: 'hooks',
      body: (now) => classUsageSyncBody(now),
      check: (answer: Answer, body) =>
        expect(
          JSON.stringify(answer.status) ===
            JSON.stringify((body.object as { status?: unknown }).status),
          () => `status ${JSON.stringify(answer.status)} is not the stored one`,
        ),
    },
    {
      hook: 'delivery/sync',
      path: '/hooks/delivery/sync',
      listener: 'hooks',
      body: (now) => deliverySyncBody(now),
      // The cell agent's work and one per VirtualCluster placed on the remote Cell.
      check: (answer: Answer) =>
        count('ManifestWorks', answer.attachments, BENCH_VIRTUALCLUSTERS + 1),
    },
    reviewCase('validate'),
    reviewCase('mutate'),
  ];
}
