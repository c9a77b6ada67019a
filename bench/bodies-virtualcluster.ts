/**
 * The VirtualCluster sync request of a resolved, Ready VirtualCluster on a local Cell in steady
 * state, as Metacontroller v4.17.2 sends it since issue 24: its five children observed (k3k
 * Ready, the quota in force, the NodePort allocated) and what its customize answer relates once
 * resolved (hooks/virtualcluster/customize.ts): the Cell's liveness record (the ConfigMap
 * kubecell-cell-<cell>, hooks/api/cell-liveness-record.ts) instead of the Cell, the class, the
 * VirtualClusters of its namespace (itself), k3k's kubeconfig Secret, its Namespace, and the
 * ManifestWork group (empty on a local Cell). Every object carries the server metadata and
 * managedFields the apiserver keeps (stored.ts), as Metacontroller's informers hold them.
 *
 * Size: 35 KB; the idle benchmark measured 32.9 KB per steady-state VirtualCluster sync request
 * on a real apiserver and Metacontroller (bench/results.json `idle`, probe.meanBytes), and
 * test/bench/http-cases.test.ts keeps this body within 15 % of it.
 */
import { cellLivenessRecord } from '../hooks/api/cell-liveness-record.js';
import type { Cell, VirtualCluster } from '../hooks/generated/types/index.js';
import { TYPE_KEYS } from '../hooks/kube/objects.js';
import type { KubernetesObject } from '../hooks/metacontroller/protocol.js';
import { syncVirtualCluster } from '../hooks/virtualcluster/sync.js';
import {
  asObserved,
  CONFIG as VC_CONFIG,
  k3kKubeconfigSecret,
  smallClass,
  syncRequest as vcSyncRequest,
  virtualCluster as vcFixture,
  withStatus,
} from '../hooks/virtualcluster/testing.js';
import { reportedCell, uid } from './bodies.js';
import { applied, asStored, controllerOf, pick, type Json, type Manager } from './stored.js';

const CREATED = '2026-11-29T12:00:00Z';
const PROVISIONED = '2026-11-29T12:01:00Z';
const FINALIZER = 'metacontroller.io/compositecontroller-kubecell-virtualcluster';

export interface VirtualClusterName {
  name: string;
  namespace: string;
  uid: string;
}

export const FIRST_VIRTUALCLUSTER: VirtualClusterName = {
  name: 'team-a',
  namespace: 'tenant-000',
  uid: '5d0c6a1e-8f3b-4c2a-9e7d-1a2b3c4d5e6f',
};

/** The n-th VirtualCluster of the benchmark's Cell, one per host namespace. */
export function virtualClusterName(n: number): VirtualClusterName {
  if (n === 0) return FIRST_VIRTUALCLUSTER;
  const namespace = `tenant-${String(n).padStart(3, '0')}`;
  return { name: `team-${n}`, namespace, uid: uid(`vc-${namespace}`) };
}

export function hostNamespaceOf(name: string): KubernetesObject {
  return asStored(
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        uid: uid(`ns-${name}`),
        labels: { 'kubecell.io/host-namespace': 'true', 'kubernetes.io/metadata.name': name },
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    } as KubernetesObject,
    [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        fields: { metadata: { labels: { 'kubecell.io/host-namespace': 'true' } } },
        time: '2026-11-29T11:00:00Z',
      },
    ],
  );
}

/** The class as stored: applied by the platform team, its usedBy written by class-usage. */
export function storedClass(virtualClusters: number): KubernetesObject {
  const klass = smallClass() as unknown as KubernetesObject & Json;
  klass.status = {
    usedBy: {
      count: virtualClusters,
      virtualClusters: Array.from({ length: Math.min(10, virtualClusters) }, (_, n) => {
        const { name, namespace } = virtualClusterName(n);
        return { namespace, name };
      }),
    },
  };
  return applied(klass);
}

/** A child as the apiserver holds it once Metacontroller created it and its controller acted. */
function storedChild(desired: KubernetesObject, nodePort: number): KubernetesObject {
  const observed = asObserved(desired, {
    uid: uid(`${desired.kind}-${desired.metadata.namespace}/${desired.metadata.name}`),
    ...(desired.kind === 'Service' ? { nodePort } : {}),
  }) as KubernetesObject & Json;
  const written = pick(desired as KubernetesObject & Json, ['spec', 'data', 'type']);
  const metadata = observed.metadata as unknown as Json;
  const managers: Manager[] = [
    {
      manager: 'metacontroller',
      operation: 'Update',
      fields: { metadata: pick(metadata, ['labels', 'annotations']), ...written },
      time: PROVISIONED,
    },
  ];
  const statusBy = (manager: string): Manager => ({
    manager,
    operation: 'Update',
    subresource: 'status',
    fields: pick(observed, ['status']),
    time: PROVISIONED,
  });
  if (desired.kind === 'Cluster') {
    observed.status = {
      phase: 'Ready',
      conditions: [{ type: 'Ready', status: 'True', reason: 'Provisioned', message: 'ok' }],
    };
    managers.push(statusBy('k3k'));
  }
  if (desired.kind === 'ResourceQuota') {
    const hard = (desired as KubernetesObject & { spec: { hard: Json } }).spec.hard;
    observed.status = { hard, used: Object.fromEntries(Object.keys(hard).map((k) => [k, '0'])) };
    managers.push(statusBy('kube-controller-manager'));
  }
  return asStored(observed, managers);
}

/** The parent as stored: applied with kubectl, Metacontroller's finalizer and status. */
function storedVirtualCluster(vc: VirtualCluster): VirtualCluster {
  const manifest = { apiVersion: vc.apiVersion, kind: vc.kind, spec: vc.spec };
  const stored = structuredClone(vc) as VirtualCluster & { metadata: Json };
  stored.metadata.annotations = {
    'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
      ...manifest,
      metadata: { name: vc.metadata.name, namespace: vc.metadata.namespace },
    }),
  };
  stored.metadata.finalizers = [FINALIZER];
  const metadata = stored.metadata;
  return asStored(stored, [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      fields: { metadata: pick(metadata, ['annotations', 'labels']), spec: vc.spec },
      time: CREATED,
    },
    {
      manager: 'metacontroller',
      operation: 'Update',
      fields: { metadata: { finalizers: [FINALIZER] } },
      time: CREATED,
    },
    {
      manager: 'metacontroller',
      operation: 'Update',
      subresource: 'status',
      fields: { status: vc.status },
      time: PROVISIONED,
    },
  ]);
}

function storedRecord(cell: Cell): KubernetesObject {
  const record = cellLivenessRecord(cell, cell.status ?? {}) as unknown as KubernetesObject & Json;
  return asStored(record, [
    {
      manager: 'metacontroller',
      operation: 'Update',
      fields: pick(record, ['metadata', 'data']),
      time: PROVISIONED,
    },
  ]);
}

/** k3k's admin kubeconfig Secret, written by the k3k controller. */
function k3kSecret({ name, namespace }: VirtualClusterName): KubernetesObject {
  const secret = k3kKubeconfigSecret(undefined, namespace, name) as KubernetesObject & Json;
  return asStored(secret, [
    { manager: 'k3k', operation: 'Update', fields: pick(secret, ['data', 'type']), time: CREATED },
  ]);
}

export interface SteadyVirtualCluster {
  /** The parent as stored, with the status of its last sync (phase Ready). */
  vc: VirtualCluster;
  children: KubernetesObject[];
  /** Related objects but the VirtualCluster itself. */
  related: KubernetesObject[];
}

/**
 * A VirtualCluster taken to Ready by its own sync hook: resolved once with the Cell related
 * (before resolution), then synced with what it relates once resolved until its status settles.
 */
export function steadyVirtualCluster(
  now: Date,
  which: VirtualClusterName = FIRST_VIRTUALCLUSTER,
  cell: Cell = reportedCell(now, 10),
): SteadyVirtualCluster {
  const vc = vcFixture({ ...which, created: CREATED });
  const related = [
    storedRecord(cell),
    storedClass(20),
    hostNamespaceOf(which.namespace),
    k3kSecret(which),
  ];
  const first = syncVirtualCluster(vcSyncRequest(vc, [cell, ...related.slice(1)]), VC_CONFIG, now);
  let parent = withStatus(vc, first.status);
  let children = first.children.map((child) => storedChild(child, 31234));
  let phase: unknown;
  for (let round = 0; round < 5; round++) {
    const request = vcSyncRequest(parent, [...related, storedVirtualCluster(parent)], children);
    const next = syncVirtualCluster(request, VC_CONFIG, now);
    const settled = JSON.stringify(next.status) === JSON.stringify(parent.status);
    parent = withStatus(vc, next.status);
    children = next.children.map((child) => storedChild(child, 31234));
    phase = (next.status as { phase?: unknown } | null)?.phase;
    if (settled && phase === 'Ready') {
      return { vc: storedVirtualCluster(parent), children, related };
    }
  }
  throw new Error(
    `the benchmark VirtualCluster ${which.namespace}/${which.name} did not settle Ready (phase ${String(phase)}): ${JSON.stringify(parent.status).slice(0, 500)}`,
  );
}

/**
 * The virtualcluster/sync request of a resolved, Ready VirtualCluster in steady state since
 * issue 24: it relates its Cell's liveness record, not the Cell (see the module comment).
 */
export function virtualClusterSyncBody(now: Date): Json {
  const { vc, children, related } = steadyVirtualCluster(now);
  const request = vcSyncRequest(vc, [...related, vc], children);
  // Once resolved the customize answer has no Cell rule, so Metacontroller sends no Cell group.
  delete request.related[TYPE_KEYS.cell];
  return JSON.parse(
    JSON.stringify({ controller: controllerOf('virtualcluster.yaml'), ...request }),
  ) as Json;
}
