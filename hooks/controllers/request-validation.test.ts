import { expect } from 'chai';
import { InvalidHookInputError } from '../metacontroller/invalid-input.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { HookRegistry } from '../server/registry.js';
import {
  cell,
  hostNamespace,
  lease,
  managedCluster,
  node,
  pod,
  readyProvider,
  relatedOf,
  resolvedVirtualCluster,
} from '../cell/testing.js';
import {
  acceptedRelated,
  asObserved,
  syncRequest,
  virtualCluster,
} from '../virtualcluster/testing.js';
import { syncVirtualCluster } from '../virtualcluster/sync.js';
import { CONFIG, NOW } from '../virtualcluster/testing.js';
import { loadFixture, type DecoratorHookBody } from '../metacontroller/testing.js';
import { validatedCompositeHooks, validatedDecoratorHooks } from './request-validation.js';

function cellBody(extra: object[] = []) {
  return {
    parent: cell(),
    children: {},
    related: relatedOf([
      managedCluster(),
      lease(10),
      node('node-a', { cpu: '64', memory: '512Gi', 'nvidia.com/gpu': '8' }),
      pod('p1', 'tenant-a', 'node-a', [{ cpu: '2', memory: '4Gi' }], { init: [{ cpu: '1' }] }),
      hostNamespace('tenant-a'),
      resolvedVirtualCluster('vc1', 'tenant-a', { 'requests.cpu': '4' }),
      ...readyProvider(),
      ...(extra as never[]),
    ]),
    finalizing: false,
  };
}

const CELL_PARENT = {
  controller: 'kubecell-cell CompositeController',
  apiVersion: 'kubecell.io/v1alpha1',
  kind: 'Cell',
};

/** The decorated object's own type: these tests are about its content, not its type. */
function parentOf(body: unknown) {
  const { apiVersion, kind } = (body as { object: KubernetesObject }).object;
  return { controller: 'kubecell-test DecoratorController', apiVersion, kind };
}

/** What a hook behind the layer does with `body`: the handler's answer, or the layer's refusal. */
async function call(
  type: 'composite' | 'decorator',
  hook: 'sync' | 'finalize' | 'customize',
  body: unknown,
  parent = CELL_PARENT,
): Promise<{ handled: boolean; answer?: unknown; refusal?: string }> {
  let handled = false;
  const customize = () => ({ relatedResources: [] });
  const composite = () => {
    handled = true;
    return { children: [] };
  };
  const decorator = () => {
    handled = true;
    return { attachments: [] };
  };
  const registry = new HookRegistry();
  if (type === 'composite') {
    const hooks = { customize, sync: composite, finalize: composite };
    registry.registerComposite('c', validatedCompositeHooks(hooks, parent));
  } else {
    const hooks = { customize, sync: decorator, finalize: decorator };
    registry.registerDecorator('d', validatedDecoratorHooks(hooks, parentOf(body)));
  }
  const lookup = registry.lookup(type === 'composite' ? 'c' : 'd', hook);
  if (!lookup.found) throw new Error(lookup.message);
  const prepared = lookup.hook.prepare(body);
  if (!prepared.ok) throw new Error(`envelope refused: ${prepared.problems.join('; ')}`);
  try {
    const answer = await prepared.value();
    return { handled, ...(handled ? {} : { answer }) };
  } catch (err) {
    if (!(err instanceof InvalidHookInputError)) throw err;
    return { handled, refusal: err.message };
  }
}

describe('the validation layer, before every handler (hooks/controllers/request-validation.ts)', () => {
  it('lets the requests Metacontroller sends through to the handler', async () => {
    expect(await call('composite', 'sync', cellBody())).to.deep.equal({ handled: true });
    const vc = virtualCluster();
    const first = syncVirtualCluster(syncRequest(vc), CONFIG, NOW);
    const children = first.children.map((child) => asObserved(child, { nodePort: 31234 }));
    const resync = syncRequest(
      { ...vc, status: first.status } as typeof vc,
      acceptedRelated(),
      children,
    );
    const vcParent = { ...CELL_PARENT, kind: 'VirtualCluster' };
    expect(
      await call('composite', 'sync', JSON.parse(JSON.stringify(resync)), vcParent),
    ).to.deep.equal({ handled: true });
    for (const fixture of ['decorator-sync-v2', 'decorator-sync-related-v2'] as const) {
      expect(await call('decorator', 'sync', loadFixture(fixture))).to.deep.equal({
        handled: true,
      });
    }
  });

  it('reads a DecoratorController request under its own keys: object and attachments', async () => {
    const body = loadFixture<DecoratorHookBody>('decorator-sync-v2');
    (body.object.metadata as unknown as Record<string, unknown>).labels = { team: 7 };
    expect(await call('decorator', 'sync', body)).to.deep.equal({
      handled: false,
      refusal:
        'invalid sync request: request.object.metadata.labels["team"]: must be a string, got number',
    });
    const attached = loadFixture<DecoratorHookBody>('decorator-sync-v2');
    const policy = attached.attachments['NetworkPolicy.networking.k8s.io/v1']?.[
      'tenant-a/kubecell-egress'
    ] as unknown as Record<string, unknown>;
    policy.spec = 'everything';
    expect(await call('decorator', 'sync', attached)).to.deep.equal({
      handled: false,
      refusal:
        'invalid sync request: request.attachments["NetworkPolicy.networking.k8s.io/v1"]["tenant-a/kubecell-egress"].spec: must be an object, got string',
    });
    const klass = loadFixture<DecoratorHookBody>('decorator-sync-related-v2');
    (klass.object as unknown as Record<string, unknown>).status = { usedBy: { count: 'two' } };
    const refused = await call('decorator', 'sync', klass);
    expect(refused.handled).to.equal(false);
    expect(refused.refusal).to.match(/^VirtualNodeClass \S+ is invalid: status\.usedBy\.count/);
  });

  it('refuses a parent of another type than the controller selects: a selector mistake', async () => {
    const refused = await call('composite', 'sync', {
      parent: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'y' } },
    });
    expect(refused).to.deep.equal({
      handled: false,
      refusal:
        'parent is v1 ConfigMap x, expected a kubecell.io/v1alpha1 Cell: the kubecell-cell CompositeController must select Cell objects only',
    });
  });

  it('checks a KubeCell parent against its schema and rules, naming the kind and the field', async () => {
    const body = cellBody();
    (body.parent as { status?: unknown }).status = { phase: 'Sleeping' };
    const refused = await call('composite', 'sync', body);
    expect(refused.handled).to.equal(false);
    expect(refused.refusal).to.match(/^Cell \S+ is invalid: status\.phase: Unsupported value/);
    const customize = await call('composite', 'customize', { parent: body.parent });
    expect(customize.refusal).to.equal(refused.refusal);
  });

  it('names fields of other objects whose JSON type the apiserver would never store', async () => {
    const broken = [
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { a: 1 } } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' }, status: { conditions: {} } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p2', namespace: 'tenant-a' },
        spec: { containers: [{ name: 'c', resources: { requests: { cpu: {} } } }] },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'd', namespace: 'kube-system' },
        status: { numberReady: { toString: 'x' } },
      },
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'n3', annotations: { 'capacity.topolvm.io/ssd': 'plenty', note: 'x' } },
        status: { capacity: { cpu: 'lots' } },
      },
    ];
    expect(await call('composite', 'sync', cellBody(broken))).to.deep.equal({
      handled: false,
      refusal:
        'invalid sync request: ' +
        [
          'request.related["Node.v1"]["n1"].metadata.labels["a"]: must be a string, got number',
          'request.related["Node.v1"]["n2"].status.conditions: must be an array, got object',
          'request.related["Node.v1"]["n3"].metadata.annotations["capacity.topolvm.io/ssd"]: must be a quantity such as 4, 500m or 16Gi',
          'request.related["Node.v1"]["n3"].status.capacity["cpu"]: must be a quantity such as 4, 500m or 16Gi',
          'request.related["Pod.v1"]["tenant-a/p2"].spec.containers[0].resources.requests["cpu"]: must be a quantity (string or number), got object',
          'request.related["DaemonSet.apps/v1"]["kube-system/d"].status.numberReady: must be a number, got object',
        ].join('; '),
    });
  });

  describe('finalize: one policy for every kind', () => {
    const invalidCell = () => {
      const body = cellBody();
      (body.parent as { spec: unknown }).spec = { machineProfile: 7 };
      return body;
    };

    it('holds the deletion of an invalid object and says how to fix it or let go', async () => {
      const refused = await call('composite', 'finalize', { ...invalidCell(), finalizing: true });
      expect(refused.handled).to.equal(false);
      expect(refused.refusal).to.match(
        /^Cell \S+ is invalid: spec\.managedClusterRef: Required value; spec\.machineProfile: Invalid value/,
      );
      expect(refused.refusal).to.include('annotated kubecell.io/skip-cleanup=true');
    });

    it('lets an invalid object annotated kubecell.io/skip-cleanup=true go, keeping its status', async () => {
      const body = { ...invalidCell(), finalizing: true };
      const parent = body.parent as KubernetesObject & { status?: unknown };
      parent.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
      parent.status = { phase: 'Ready' };
      expect(await call('composite', 'finalize', body)).to.deep.equal({
        handled: false,
        answer: { status: { phase: 'Ready' }, children: [], finalized: true },
      });
      const decorated = loadFixture<DecoratorHookBody>('decorator-sync-v2');
      decorated.object.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
      (decorated.object.metadata as unknown as Record<string, unknown>).labels = { team: 7 };
      expect(await call('decorator', 'finalize', { ...decorated, finalizing: true })).to.deep.equal(
        {
          handled: false,
          answer: { attachments: [], finalized: true },
        },
      );
    });

    it('lets a valid object annotated kubecell.io/skip-cleanup=true go after its handler reports', async () => {
      const body = { ...cellBody(), finalizing: true };
      body.parent.metadata.annotations = { 'kubecell.io/skip-cleanup': 'true' };
      const registry = new HookRegistry().registerComposite(
        'c',
        validatedCompositeHooks(
          {
            sync: () => ({ children: [] }),
            finalize: () => ({ status: { phase: 'Deleting' }, children: [], finalized: false }),
          },
          CELL_PARENT,
        ),
      );
      const lookup = registry.lookup('c', 'finalize');
      if (!lookup.found) throw new Error(lookup.message);
      const prepared = lookup.hook.prepare(body);
      if (!prepared.ok) throw new Error(prepared.problems.join('; '));
      expect(await prepared.value()).to.deep.equal({
        status: { phase: 'Deleting' },
        children: [],
        finalized: true,
      });
      delete body.parent.metadata.annotations;
      const held = lookup.hook.prepare(body);
      if (!held.ok) throw new Error(held.problems.join('; '));
      expect(await held.value()).to.include({ finalized: false });
    });
  });
});
