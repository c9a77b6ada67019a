import { expect } from 'chai';
import fc from 'fast-check';
import { MAX_BODY_DEPTH, nestingDepthExceeds } from '../json/json.js';
import {
  parseCompositeSyncRequest,
  parseCustomizeRequest,
  parseDecoratorSyncRequest,
} from './request-shape.js';
import {
  CUSTOMIZE_HOOK_REQUEST_FIELDS,
  DECORATOR_HOOK_REQUEST_FIELDS,
  loadFixture,
  type DecoratorHookBody,
} from './testing.js';

const parent = {
  apiVersion: 'kubecell.io/v1alpha1',
  kind: 'Cell',
  metadata: { name: 'cell1', namespace: 'kubecell-system', uid: 'u1' },
};

function problemsOf(result: { ok: boolean; problems?: string[] }): string[] {
  expect(result.ok, 'expected the request to be refused').to.equal(false);
  return result.problems ?? [];
}

describe('hook request shape', () => {
  it('refuses nesting deeper than any Kubernetes object, before reading anything', () => {
    let deep: unknown = null;
    for (let i = 0; i < MAX_BODY_DEPTH + 5; i++) deep = { a: deep };
    const tooDeep = [
      `request body nests deeper than ${MAX_BODY_DEPTH} levels; no Kubernetes object does`,
    ];
    for (const parse of [
      parseCustomizeRequest,
      parseCompositeSyncRequest,
      parseDecoratorSyncRequest,
    ]) {
      expect(problemsOf(parse({ parent: { ...parent, spec: deep } }))).to.deep.equal(tooDeep);
    }
    expect(nestingDepthExceeds([[[1]]], 3)).to.equal(false);
    expect(nestingDepthExceeds([[[[1]]]], 3)).to.equal(true);
  });

  describe('composite sync', () => {
    it('accepts a full request and returns it normalized', () => {
      const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } };
      const result = parseCompositeSyncRequest({
        controller: { kind: 'CompositeController' },
        parent,
        children: { 'Node.v1': { n1: node }, 'Cluster.k3k.io/v1beta1': null },
        related: { 'Lease.coordination.k8s.io/v1': {} },
        finalizing: true,
      });
      expect(result).to.deep.equal({
        ok: true,
        value: {
          controller: { kind: 'CompositeController' },
          parent,
          children: { 'Node.v1': { n1: node }, 'Cluster.k3k.io/v1beta1': {} },
          related: { 'Lease.coordination.k8s.io/v1': {} },
          finalizing: true,
        },
      });
    });

    it('reads absent or null maps as empty and absent finalizing as false', () => {
      const result = parseCompositeSyncRequest({ parent, related: null });
      expect(result).to.deep.equal({
        ok: true,
        value: { parent, children: {}, related: {}, finalizing: false },
      });
    });

    it('refuses a body that is not an object', () => {
      expect(problemsOf(parseCompositeSyncRequest(null))).to.deep.equal([
        'request: must be a JSON object, got null',
      ]);
      expect(problemsOf(parseCompositeSyncRequest('x'))).to.deep.equal([
        'request: must be a JSON object, got string',
      ]);
    });

    it('names each missing or mistyped parent field', () => {
      expect(problemsOf(parseCompositeSyncRequest({}))).to.deep.equal(['request.parent: required']);
      expect(problemsOf(parseCompositeSyncRequest({ parent: [] }))).to.deep.equal([
        'request.parent: must be an object, got array',
      ]);
      expect(
        problemsOf(
          parseCompositeSyncRequest({ parent: { apiVersion: 1, kind: '', metadata: {} } }),
        ),
      ).to.deep.equal([
        'request.parent.apiVersion: must be a string, got number',
        'request.parent.kind: must not be empty',
        'request.parent.metadata.name: required',
      ]);
      expect(
        problemsOf(parseCompositeSyncRequest({ parent: { apiVersion: 'v1', kind: 'X' } })),
      ).to.deep.equal(['request.parent.metadata: required']);
      expect(
        problemsOf(
          parseCompositeSyncRequest({
            parent: { ...parent, metadata: { name: 'a', namespace: 3, uid: {} } },
          }),
        ),
      ).to.deep.equal([
        'request.parent.metadata.namespace: must be a string, got number',
        'request.parent.metadata.uid: must be a string, got object',
      ]);
    });

    it('names a children or related map of the wrong shape', () => {
      expect(problemsOf(parseCompositeSyncRequest({ parent, children: [] }))).to.deep.equal([
        'request.children: must be an object keyed by Kind.group/version, got array',
      ]);
      expect(
        problemsOf(parseCompositeSyncRequest({ parent, related: { 'Service.v1': 'x' } })),
      ).to.deep.equal(['request.related["Service.v1"]: must be an object, got string']);
      expect(
        problemsOf(
          parseCompositeSyncRequest({ parent, children: { 'Service.v1': { 'ns/a': 42 } } }),
        ),
      ).to.deep.equal(['request.children["Service.v1"]["ns/a"]: must be an object, got number']);
    });

    it('refuses type keys that are not Kind.version or Kind.group/version', () => {
      for (const key of ['Service', 'v1/Service', 'apps/v1.Deployment', 'Service.']) {
        expect(
          problemsOf(parseCompositeSyncRequest({ parent, children: { [key]: {} } })),
          key,
        ).to.deep.equal([
          `request.children[${JSON.stringify(key)}]: key must be Kind.version or Kind.group/version`,
        ]);
      }
    });

    it('refuses inner keys that are not the object namespace/name (a v1 hook)', () => {
      const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'ns' } };
      expect(
        problemsOf(parseCompositeSyncRequest({ parent, children: { 'Service.v1': { api: svc } } })),
      ).to.deep.equal([
        'request.children["Service.v1"]["api"]: key must be the object\'s namespace/name "ns/api" ' +
          '(Metacontroller hook version v2; is the hook declared with version: v2?)',
      ]);
    });

    it('requires apiVersion, kind and metadata.name on every object of a map', () => {
      const related = {
        'Node.v1': {
          z: { metadata: { name: 'z' } },
          a: { apiVersion: 'v1', kind: 'Node' },
          b: { apiVersion: 'v1', kind: 'Node', metadata: [] },
          c: { apiVersion: 'v1', kind: 'Node', metadata: { name: 7 } },
          'ns/d': { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'd', namespace: ['ns'] } },
        },
      };
      expect(problemsOf(parseCompositeSyncRequest({ parent, related }))).to.deep.equal([
        'request.related["Node.v1"]["z"].apiVersion: required',
        'request.related["Node.v1"]["z"].kind: required',
        'request.related["Node.v1"]["a"].metadata: required',
        'request.related["Node.v1"]["b"].metadata: must be an object, got array',
        'request.related["Node.v1"]["c"].metadata.name: must be a string, got number',
        'request.related["Node.v1"]["ns/d"].metadata.namespace: must be a string, got array',
        'request.related["Node.v1"]["ns/d"]: key must be the object\'s namespace/name "d" ' +
          '(Metacontroller hook version v2; is the hook declared with version: v2?)',
      ]);
    });

    it('accepts a map entry exactly when its identity is complete and its key is namespace/name', () => {
      // Entries that pass are checked without building any message (issue 25); this holds that
      // shortcut to the rule the messages state.
      const field = fc.constantFrom(undefined, null, '', 'a', 'ns', 'a/b', 7, [], {});
      const entry = fc.record(
        {
          apiVersion: field,
          kind: field,
          metadata: fc.oneof(
            fc.record({ name: field, namespace: field }, { requiredKeys: [] }),
            field,
          ),
        },
        { requiredKeys: [] },
      );
      const key = fc.constantFrom('a', 'ns/a', 'ns', 'a/b', '', '/a', 'ns/', 'ns/a/b', 'a/b/a');
      fc.assert(
        fc.property(key, fc.oneof(entry, field), (k, obj) => {
          const result = parseCompositeSyncRequest({ parent, related: { 'Pod.v1': { [k]: obj } } });
          const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';
          const o = obj as { apiVersion?: unknown; kind?: unknown; metadata?: unknown } | null;
          const meta = o?.metadata as { name?: unknown; namespace?: unknown } | undefined;
          const fine =
            typeof obj === 'object' &&
            obj !== null &&
            !Array.isArray(obj) &&
            nonEmpty(o?.apiVersion) &&
            nonEmpty(o?.kind) &&
            typeof meta === 'object' &&
            meta !== null &&
            !Array.isArray(meta) &&
            nonEmpty(meta.name) &&
            (meta.namespace === undefined ||
              meta.namespace === null ||
              typeof meta.namespace === 'string') &&
            k === (meta.namespace ? `${meta.namespace as string}/${meta.name}` : meta.name);
          expect(result.ok, JSON.stringify({ k, obj })).to.equal(fine);
          if (!fine) {
            for (const problem of problemsOf(result)) {
              expect(problem).to.match(/^request\.related\["Pod\.v1"\]\[/);
            }
          }
        }),
        { numRuns: 2000 },
      );
    });

    it('refuses a finalizing flag that is not a boolean', () => {
      expect(problemsOf(parseCompositeSyncRequest({ parent, finalizing: 'yes' }))).to.deep.equal([
        'request.finalizing: must be a boolean, got string',
      ]);
    });

    it('reports every problem at once', () => {
      expect(
        problemsOf(parseCompositeSyncRequest({ controller: 1, children: 2, finalizing: 3 })),
      ).to.have.length(4);
    });

    it('cuts a very long key short in messages', () => {
      const key = `A.${'v'.repeat(5000)}`;
      const [problem] = problemsOf(parseCompositeSyncRequest({ parent, children: { [key]: 1 } }));
      expect(problem).to.be.a('string');
      expect(problem?.length).to.be.below(200);
    });
  });

  describe('customize', () => {
    it('accepts {controller, parent}', () => {
      expect(parseCustomizeRequest({ controller: {}, parent })).to.deep.equal({
        ok: true,
        value: { controller: {}, parent },
      });
    });

    it('requires the parent', () => {
      expect(problemsOf(parseCustomizeRequest({ controller: {} }))).to.deep.equal([
        'request.parent: required',
      ]);
    });
  });

  describe('decorator sync and finalize', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-a' } };

    it('the fixtures carry exactly the fields of Metacontroller’s Go request structs', () => {
      for (const name of ['decorator-sync-v2', 'decorator-sync-related-v2'] as const) {
        expect(Object.keys(loadFixture(name)), name).to.deep.equal([
          ...DECORATOR_HOOK_REQUEST_FIELDS,
        ]);
      }
      expect(Object.keys(loadFixture('decorator-customize-v2'))).to.deep.equal([
        ...CUSTOMIZE_HOOK_REQUEST_FIELDS,
      ]);
    });

    it('accepts the body Metacontroller posts and hands object and attachments over', () => {
      const body = loadFixture<DecoratorHookBody>('decorator-sync-v2');
      const result = parseDecoratorSyncRequest(body);
      expect(result).to.deep.equal({
        ok: true,
        value: {
          controller: body.controller,
          parent: body.object,
          children: body.attachments,
          related: {},
          finalizing: false,
        },
      });
      if (!result.ok) return;
      expect(
        Object.keys(result.value.children['NetworkPolicy.networking.k8s.io/v1'] ?? {}),
      ).to.have.length(4);
      const related = loadFixture<DecoratorHookBody>('decorator-sync-related-v2');
      const classSync = parseDecoratorSyncRequest({ ...related, finalizing: true });
      expect(classSync.ok).to.equal(true);
      if (!classSync.ok) return;
      expect(classSync.value.parent).to.deep.equal(related.object);
      expect(classSync.value.children).to.deep.equal({});
      expect(classSync.value.related).to.deep.equal(related.related);
      expect(classSync.value.finalizing).to.equal(true);
    });

    it('reads absent or null maps as empty', () => {
      expect(parseDecoratorSyncRequest({ object: ns, attachments: null })).to.deep.equal({
        ok: true,
        value: { parent: ns, children: {}, related: {}, finalizing: false },
      });
    });

    it('refuses the CompositeController shape, naming the fields Metacontroller uses', () => {
      const problems = problemsOf(
        parseDecoratorSyncRequest({ parent: ns, children: {}, related: {}, finalizing: false }),
      );
      expect(problems).to.have.length(2);
      expect(problems[0]).to.match(/^request\.object: required \(the body has "parent"/);
      expect(problems[1]).to.match(/^request\.attachments: required \(the body has "children"/);
    });

    it('names the wrong field of the object and of the attachments', () => {
      expect(problemsOf(parseDecoratorSyncRequest({}))).to.deep.equal(['request.object: required']);
      expect(
        problemsOf(
          parseDecoratorSyncRequest({
            object: { ...ns, metadata: {} },
            attachments: {
              'NetworkPolicy.networking.k8s.io/v1': { 'tenant-a': { ...ns, kind: 7 } },
            },
            finalizing: 'no',
          }),
        ),
      ).to.deep.equal([
        'request.object.metadata.name: required',
        'request.attachments["NetworkPolicy.networking.k8s.io/v1"]["tenant-a"].kind: must be a string, got number',
        'request.finalizing: must be a boolean, got string',
      ]);
    });
  });

  describe('decorator customize', () => {
    it('accepts the body Metacontroller posts: the class under parent', () => {
      const body = loadFixture<{ controller: object; parent: object }>('decorator-customize-v2');
      expect(parseCustomizeRequest(body)).to.deep.equal({ ok: true, value: body });
    });
  });
});
