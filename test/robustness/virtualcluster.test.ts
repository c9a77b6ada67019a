// Properties of the VirtualCluster sync hook over sequences of observations:
//   1. once status.resolved is set, no sequence of observed states (Cell or class changed,
//      replaced, outdated or gone, the Cell's Node addresses moved, neighbours, k3k's kubeconfig
//      rotated or broken, children missing, stale parent status, the clock moving) makes a sync
//      (not finalizing) drop or change a child, or change status.resolved;
//   2. feeding the hook's own output back (children as observed children, status as the parent's
//      status) reaches a fixed point: no flapping children, no status churn, even while the
//      Cell's heartbeat (status.observedAt) moves.
import { expect } from 'chai';
import fc from 'fast-check';
import type {
  Cell,
  CellNodeAddress,
  VirtualCluster,
  VirtualClusterStatus,
} from '../../hooks/generated/types/index.js';
import { TYPE_KEYS } from '../../hooks/kube/objects.js';
import type {
  CompositeSyncRequest,
  CompositeSyncResponse,
  KubernetesObject,
} from '../../hooks/metacontroller/protocol.js';
import { kubeconfigServers } from '../../hooks/virtualcluster/kubeconfig.js';
import { secretKubeconfig } from '../../hooks/virtualcluster/kubeconfig-secret.js';
import {
  asObserved,
  cell,
  hostNamespace,
  K3K_KUBECONFIG,
  k3kKubeconfigSecret,
  NODE_ADDRESSES,
  NOW,
  smallClass,
  syncRequest,
  virtualCluster,
} from '../../hooks/virtualcluster/testing.js';
import { callHook, productRegistry, wire } from './support.js';

const RUNS = Number(process.env['KUBECELL_ROBUSTNESS_RUNS'] ?? 150);
const NODE_PORT = 31234;

/** One observation of the world around the VirtualCluster. */
interface World {
  cell:
    | 'same'
    | 'absent'
    | 'notObserved'
    | 'replaced'
    | 'stale'
    | 'degraded'
    | 'mcReplaced'
    | 'noStatus'
    | 'otherProfile'
    | 'outdated';
  klass: 'same' | 'absent' | 'notObserved' | 'replaced' | 'bigger';
  /** The Cell's status.nodeAddresses. */
  addresses: 'same' | 'none' | 'absent' | 'moved';
  namespace: 'host' | 'absent' | 'notHost' | 'notObserved';
  neighbours: 'none' | 'older' | 'younger' | 'notObserved';
  k3k: 'absent' | 'valid' | 'rotated' | 'notBase64' | 'notKubeconfig';
  /** Which of the last desired children Metacontroller observes (the others are gone or not yet seen). */
  observed: {
    Cluster: boolean;
    ResourceQuota: boolean;
    LimitRange: boolean;
    Service: boolean;
    Secret: boolean;
  };
  nodePort: number | null;
  k3kReady: boolean;
  quotaInForce: boolean;
  specChanged: boolean;
  deleting: boolean;
  /** The parent's status is the one before the last (a status update was lost). */
  staleStatus: boolean;
  minutesLater: number;
}

const worldArbitrary: fc.Arbitrary<World> = fc.record({
  cell: fc.constantFrom(
    'same',
    'same',
    'absent',
    'notObserved',
    'replaced',
    'stale',
    'degraded',
    'mcReplaced',
    'noStatus',
    'otherProfile',
    'outdated',
  ),
  klass: fc.constantFrom('same', 'same', 'absent', 'notObserved', 'replaced', 'bigger'),
  addresses: fc.constantFrom('same', 'same', 'none', 'absent', 'moved'),
  namespace: fc.constantFrom('host', 'host', 'absent', 'notHost', 'notObserved'),
  neighbours: fc.constantFrom('none', 'none', 'older', 'younger', 'notObserved'),
  k3k: fc.constantFrom('absent', 'valid', 'valid', 'rotated', 'notBase64', 'notKubeconfig'),
  observed: fc.record({
    Cluster: fc.boolean(),
    ResourceQuota: fc.boolean(),
    LimitRange: fc.boolean(),
    Service: fc.boolean(),
    Secret: fc.boolean(),
  }),
  nodePort: fc.option(fc.integer({ min: 30000, max: 32767 })),
  k3kReady: fc.boolean(),
  quotaInForce: fc.boolean(),
  specChanged: fc.constantFrom(false, false, false, false, true),
  deleting: fc.boolean(),
  staleStatus: fc.boolean(),
  minutesLater: fc.integer({ min: 0, max: 24 * 60 }),
}) as fc.Arbitrary<World>;

const ROTATED_KUBECONFIG = K3K_KUBECONFIG.replace(
  'https://10.43.12.34:443',
  'https://10.43.99.1:443',
  // Eight base64 characters more: another key, still base64 as the allowlist requires.
).replace('client-key-data: ', 'client-key-data: cm90YXRl');

const ADDRESSES: Record<World['addresses'], CellNodeAddress[]> = {
  same: [...NODE_ADDRESSES],
  none: [],
  absent: [],
  moved: [{ node: 'node-c', address: '10.9.9.9' }],
};

/** The Cell as `world` has it; `observedAt` is its heartbeat when given. */
function worldCell(world: World, observedAt: string | undefined): Cell {
  const c = cell({
    ...(world.cell === 'replaced' ? { uid: 'another-cell-uid' } : {}),
    ...(world.cell === 'otherProfile' ? { profile: 'h100' } : {}),
    addresses: ADDRESSES[world.addresses],
  });
  if (world.addresses === 'absent') delete c.status!.nodeAddresses;
  if (observedAt !== undefined) c.status!.observedAt = observedAt;
  if (world.cell === 'outdated') c.status!.observedAt = '2026-11-28T00:00:00Z';
  if (world.cell === 'stale') c.status!.managedCluster!.leaseFresh = false;
  if (world.cell === 'degraded') {
    c.status!.phase = 'Degraded';
    c.status!.conditions = c.status!.conditions!.map((condition) =>
      condition.type === 'InventoryFresh'
        ? { ...condition, status: 'False', reason: 'InventorySourceUnavailable' }
        : condition,
    );
  }
  if (world.cell === 'mcReplaced') {
    c.status!.phase = 'Failed';
    c.status!.conditions = [
      {
        type: 'Ready',
        status: 'False',
        reason: 'ManagedClusterReplaced',
        message: 'replaced',
        lastTransitionTime: '2026-11-29T22:00:00Z',
      },
    ];
  }
  if (world.cell === 'noStatus') delete c.status;
  return c;
}

function related(world: World, observedAt?: string): KubernetesObject[] {
  const objects: KubernetesObject[] = [];
  if (world.cell !== 'absent' && world.cell !== 'notObserved') {
    objects.push(worldCell(world, observedAt));
  }
  const k = smallClass(world.klass === 'replaced' ? 'another-class-uid' : undefined);
  if (world.klass === 'bigger') k.spec.entitlement.workloadHard['requests.cpu'] = '64';
  if (world.klass !== 'absent' && world.klass !== 'notObserved') objects.push(k);
  if (world.namespace === 'host') objects.push(hostNamespace('tenant-a'));
  if (world.namespace === 'notHost') objects.push(hostNamespace('tenant-a', false));
  if (world.neighbours === 'older') {
    objects.push(
      virtualCluster({ name: 'older', uid: 'older-uid', created: '2026-11-01T00:00:00Z' }),
    );
  }
  if (world.neighbours === 'younger') {
    objects.push(
      virtualCluster({ name: 'younger', uid: 'younger-uid', created: '2026-11-30T00:00:00Z' }),
    );
  }
  if (world.k3k !== 'absent') {
    const secret = k3kKubeconfigSecret(
      world.k3k === 'rotated' ? ROTATED_KUBECONFIG : K3K_KUBECONFIG,
    );
    if (world.k3k === 'notBase64') secret.data = { 'kubeconfig.yaml': '%%% not base64 %%%' };
    if (world.k3k === 'notKubeconfig')
      secret.data = { 'kubeconfig.yaml': Buffer.from('just: [text').toString('base64') };
    objects.push(secret);
  }
  return objects;
}

/** The children Metacontroller observes: the last desired ones it applied, as the apiserver stores them. */
function observedChildren(
  world: World,
  lastDesired: readonly KubernetesObject[],
): KubernetesObject[] {
  return lastDesired
    .filter((child) => world.observed[child.kind as keyof World['observed']] ?? false)
    .map((child) => {
      const observed = asObserved(
        child,
        child.kind === 'Service' && world.nodePort !== null ? { nodePort: world.nodePort } : {},
      );
      if (child.kind === 'Cluster' && world.k3kReady) {
        (observed as KubernetesObject & { status?: unknown }).status = {
          phase: 'Ready',
          conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }],
        };
      }
      if (child.kind === 'ResourceQuota' && world.quotaInForce) {
        const spec = (child as KubernetesObject & { spec: { hard: Record<string, string> } }).spec;
        (observed as KubernetesObject & { status?: unknown }).status = {
          hard: spec.hard,
          used: { pods: '1' },
        };
      }
      return observed;
    });
}

function request(
  vc: VirtualCluster,
  world: World,
  lastDesired: readonly KubernetesObject[],
  observedAt?: string,
): CompositeSyncRequest<VirtualCluster> {
  const parent = structuredClone(vc);
  if (world.specChanged) {
    parent.spec = { cellRef: { name: 'cell2' }, classRef: { name: 'large' } };
    parent.metadata.generation = (parent.metadata.generation ?? 1) + 1;
  }
  if (world.deleting) parent.metadata.deletionTimestamp = '2026-11-30T06:00:00Z';
  const req = syncRequest(parent, related(world, observedAt), observedChildren(world, lastDesired));
  const omit: [World[keyof World], string][] = [
    [world.cell, TYPE_KEYS.cell],
    [world.klass, TYPE_KEYS.virtualNodeClass],
    [world.namespace, TYPE_KEYS.namespace],
    [world.neighbours, TYPE_KEYS.virtualCluster],
  ];
  for (const [variant, key] of omit) if (variant === 'notObserved') delete req.related[key];
  return req;
}

function statusOf(response: CompositeSyncResponse): VirtualClusterStatus {
  return response.status as VirtualClusterStatus;
}

function byKind(children: readonly KubernetesObject[], kind: string): KubernetesObject[] {
  return children.filter((child) => child.kind === kind);
}

/** Without the label Metacontroller adds to what it applies (a kept child carries it back). */
function withoutControllerUid(object: KubernetesObject | undefined): KubernetesObject | undefined {
  if (object === undefined) return undefined;
  const copy = structuredClone(object);
  if (copy.metadata.labels) delete copy.metadata.labels['controller-uid'];
  return copy;
}

describe('robustness: the VirtualCluster sync over sequences of observations', function () {
  this.timeout(120_000);
  let clock = NOW;
  const registry = productRegistry(() => clock);
  const sync = (req: CompositeSyncRequest<VirtualCluster>, at: Date) => {
    clock = at;
    return callHook(registry, 'virtualcluster', 'sync', req);
  };

  /** A VirtualCluster resolved on the accepted fixtures, and its first children. */
  async function resolvedStart() {
    const vc = virtualCluster();
    const first = await sync(syncRequest(vc), NOW);
    const resolved = statusOf(first).resolved;
    expect(resolved, 'the fixtures resolve').to.not.equal(undefined);
    return { vc: { ...vc, status: first.status } as VirtualCluster, first, resolved };
  }

  it('never drops or changes a child, nor status.resolved, once resolved', async () => {
    const start = await resolvedStart();
    const rendered = new Map(start.first.children.map((child) => [child.kind, child]));
    expect([...rendered.keys()]).to.deep.equal([
      'Cluster',
      'ResourceQuota',
      'LimitRange',
      'Service',
    ]);

    // How often the interesting cases came up, so that a silent generator change is noticed.
    const seen = { keptSecret: 0, renderedSecret: 0, failed: 0, degraded: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(worldArbitrary, { minLength: 1, maxLength: 8 }), async (worlds) => {
        let vc = start.vc;
        let previousStatus = start.vc.status;
        let lastDesired = start.first.children;
        for (const [step, world] of worlds.entries()) {
          const req = request(vc, world, lastDesired);
          const at = new Date(NOW.getTime() + (step + 1) * world.minutesLater * 60_000);
          const response = await sync(req, at);
          const where = `step ${step}: ${JSON.stringify(world)}`;

          expect(statusOf(response).resolved, where).to.deep.equal(start.resolved);
          const kinds = response.children.map((child) => child.kind);
          expect(
            kinds.filter((kind) => kind !== 'Secret'),
            where,
          ).to.deep.equal(['Cluster', 'ResourceQuota', 'LimitRange', 'Service']);
          for (const [kind, child] of rendered) {
            expect(byKind(response.children, kind), `${where}: ${kind}`).to.deep.equal([child]);
          }
          const secrets = byKind(response.children, 'Secret');
          expect(secrets.length, where).to.be.at.most(1);
          const observedSecret = req.children[TYPE_KEYS.secret]
            ? Object.values(req.children[TYPE_KEYS.secret] ?? {})[0]
            : undefined;
          if (observedSecret !== undefined) {
            // Never dropped; changed only to point at the endpoint with a readable k3k kubeconfig.
            expect(secrets, `${where}: the published Secret is kept`).to.have.length(1);
            const port = world.observed.Service ? world.nodePort : null;
            const renderable = port !== null && (world.k3k === 'valid' || world.k3k === 'rotated');
            if (!renderable) {
              seen.keptSecret += 1;
              expect(withoutControllerUid(secrets[0]), `${where}: Secret unchanged`).to.deep.equal(
                withoutControllerUid(lastDesired.find((child) => child.kind === 'Secret')),
              );
            }
          }
          for (const secret of secrets) {
            const port = world.observed.Service ? world.nodePort : null;
            const text = secretKubeconfig(secret as never);
            const servers = text === undefined ? undefined : kubeconfigServers(text);
            if (port !== null && (world.k3k === 'valid' || world.k3k === 'rotated')) {
              seen.renderedSecret += 1;
              expect(servers, where).to.deep.equal([
                `https://${start.resolved?.endpointAddress}:${port}`,
              ]);
            }
          }

          if (statusOf(response).phase === 'Failed') seen.failed += 1;
          if (statusOf(response).phase === 'Degraded') seen.degraded += 1;

          // What Metacontroller does next: apply the children, store the status (unless lost).
          lastDesired = response.children;
          const stored = world.staleStatus ? previousStatus : response.status;
          previousStatus = vc.status;
          vc = { ...vc, status: wire(stored) } as VirtualCluster;
        }
      }),
      { numRuns: RUNS },
    );
    for (const [name, count] of Object.entries(seen)) {
      expect(count, `${name} never came up: ${JSON.stringify(seen)}`).to.be.above(0);
    }
  });

  it('reaches a fixed point when its own output is fed back, one step after the children stop changing', async () => {
    const staticWorld = worldArbitrary.map((world) => ({
      ...world,
      specChanged: false,
      deleting: false,
      staleStatus: false,
      minutesLater: 0,
      // The children exist once applied; the apiserver allocates the NodePort.
      observed: {
        Cluster: true,
        ResourceQuota: true,
        LimitRange: true,
        Service: true,
        Secret: true,
      },
      nodePort: NODE_PORT,
    }));
    await fc.assert(
      fc.asyncProperty(staticWorld, fc.boolean(), async (world, fromResolved) => {
        const start = fromResolved ? await resolvedStart() : undefined;
        let vc = start?.vc ?? virtualCluster();
        let lastDesired: KubernetesObject[] = start?.first.children ?? [];
        const outputs: string[] = [];
        const childrenSeen: string[] = [];
        for (let step = 0; step < 6; step++) {
          // The Cell refreshes its heartbeat meanwhile (within the 600 s its readers accept).
          const heartbeat = new Date(NOW.getTime() - step * 50_000).toISOString();
          const response = await sync(request(vc, world, lastDesired, heartbeat), NOW);
          outputs.push(JSON.stringify(response));
          childrenSeen.push(JSON.stringify(response.children));
          lastDesired = response.children;
          vc = { ...vc, status: wire(response.status) } as VirtualCluster;
        }
        const where = JSON.stringify(world);
        // Children settle within 3 syncs: render, then the Secret once the NodePort is observed.
        const childrenSettle = childrenSeen.findIndex(
          (children, i) => i > 0 && children === childrenSeen[i - 1],
        );
        expect(childrenSettle, `${where}: children keep changing`).to.be.within(1, 3);
        // From the sync after the children stopped changing, every answer is the same.
        for (let i = childrenSettle + 1; i < outputs.length; i++) {
          expect(outputs[i], `${where}: answer ${i} differs from answer ${i - 1}`).to.equal(
            outputs[i - 1],
          );
        }
      }),
      { numRuns: RUNS },
    );
  });
});
