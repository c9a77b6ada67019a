// The namespace allowlist of Cells and VirtualNodeClasses (spec.namespaceSelector) in the
// validating webhook: a VirtualCluster or plan may name a Cell or class only from a namespace
// its selector selects. The same rule is checked by the feasibility evaluation
// (hooks/feasibility, check NamespaceAllowed), so it also holds when the webhook is bypassed;
// test/cluster/e2e/tenancy.test.ts shows both through the real apiserver and Metacontroller.
import { expect } from 'chai';
import { createInMemoryLookup, type ClusterLookup, type PlacementTargetSummary } from './lookup.js';
import { namespaceNotAllowedError } from './rules.js';
import type { AdmissionRequest, AdmissionResponse } from './review.js';
import { admissionReview, fakeLookup, sample, type Json } from './testing.js';
import { validateReview } from './webhook.js';

const metadata = (object: Json): Json => object.metadata as Json;
const spec = (object: Json): Json => object.spec as Json;

async function validate(
  body: Json,
  lookup: ClusterLookup = fakeLookup(),
  controllerNamespace?: string,
): Promise<AdmissionResponse> {
  return validateReview(body.request as AdmissionRequest, {
    lookup,
    lookupTimeoutMs: 200,
    ...(controllerNamespace === undefined ? {} : { controllerNamespace }),
  });
}

/** A VirtualCluster or plan sample moved to `namespace`, naming `cell` and `klass`. */
function placed(file: string, namespace: string, cell: string, klass: string): Json {
  const object = sample(file);
  metadata(object).namespace = namespace;
  spec(object).cellRef = { name: cell };
  spec(object).classRef = { name: klass };
  return object;
}

/** A lookup that counts the Cell and class reads. */
function counting(inner: ClusterLookup): ClusterLookup & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    namespaceLabels: (name) => inner.namespaceLabels(name),
    listVirtualClusters: (options) => inner.listVirtualClusters(options),
    getCell: (namespace, name) => {
      reads.push(`Cell ${namespace}/${name}`);
      return inner.getCell(namespace, name);
    },
    getVirtualNodeClass: (name) => {
      reads.push(`VirtualNodeClass ${name}`);
      return inner.getVirtualNodeClass(name);
    },
  };
}

const gpuOnly: PlacementTargetSummary = {
  metadata: { name: 'gpu-tier' },
  spec: {
    namespaceSelector: {
      matchExpressions: [{ key: 'example.com/tier', operator: 'In', values: ['gpu'] }],
    },
  },
};

describe('admission: namespaceSelector of Cells and VirtualNodeClasses', () => {
  it('admits a VirtualCluster and a plan in a namespace both selectors select (the samples)', async () => {
    for (const file of ['51-virtualcluster-full.yaml', '41-virtualclusterplan-full.yaml']) {
      const response = await validate(admissionReview('CREATE', sample(file)));
      expect(response.allowed, `${file}: ${response.status?.message}`).to.equal(true);
    }
  });

  it('refuses a VirtualCluster in another host namespace, naming each selector that refuses it', async () => {
    const vc = placed('51-virtualcluster-full.yaml', 'tenant-b', 'cell1', 'small');
    const response = await validate(admissionReview('CREATE', vc));
    expect(response.allowed).to.equal(false);
    expect(response.status?.code).to.equal(422);
    expect(response.status?.message).to.equal(
      'VirtualCluster.kubecell.io "team-a" is invalid: [' +
        'spec.cellRef.name: Forbidden: namespace "tenant-b" may not use Cell "cell1": the Cell\'s ' +
        'spec.namespaceSelector (kubernetes.io/metadata.name in (tenant-a,tenant-c)) does not select it; ' +
        'name a Cell whose namespaceSelector selects this namespace, or ask a platform ' +
        'administrator to label the namespace or widen the selector (a VirtualCluster is refused ' +
        'the same way by the feasibility evaluation, check NamespaceAllowed), ' +
        'spec.classRef.name: Forbidden: namespace "tenant-b" may not use VirtualNodeClass ' +
        '"small": the VirtualNodeClass\'s spec.namespaceSelector ' +
        '(kubernetes.io/metadata.name in (tenant-a,tenant-c)) does not select it; name a VirtualNodeClass whose ' +
        'namespaceSelector selects this namespace, or ask a platform administrator to label the ' +
        'namespace or widen the selector (a VirtualCluster is refused the same way by the ' +
        'feasibility evaluation, check NamespaceAllowed)]',
    );
    expect(
      response.status?.details?.causes?.map((cause) => [cause.field, cause.reason]),
    ).to.deep.equal([
      ['spec.cellRef.name', 'FieldValueForbidden'],
      ['spec.classRef.name', 'FieldValueForbidden'],
    ]);
  });

  it('refuses a plan the same way, and only for the object whose selector refuses', async () => {
    // cell2 and cpu-small (the minimal samples) set no selector: every host namespace may use them.
    const allowed = placed('41-virtualclusterplan-full.yaml', 'tenant-b', 'cell2', 'cpu-small');
    expect((await validate(admissionReview('CREATE', allowed))).allowed).to.equal(true);
    const plan = placed('41-virtualclusterplan-full.yaml', 'tenant-b', 'cell2', 'small');
    const response = await validate(admissionReview('CREATE', plan));
    expect(response.allowed).to.equal(false);
    expect(response.status?.message).to.match(
      /^VirtualClusterPlan\.kubecell\.io "small-on-cell1" is invalid: spec\.classRef\.name: Forbidden: namespace "tenant-b" may not use VirtualNodeClass "small": /,
    );
    expect(response.status?.message).to.include('(a VirtualClusterPlan is refused the same way');
  });

  it('selects on any label of the namespace, and reads the Cell in the controller namespace', async () => {
    const lookup = counting(
      fakeLookup({
        namespaces: {
          'team-gpu': { 'kubecell.io/host-namespace': 'true', 'example.com/tier': 'gpu' },
          'team-cpu': { 'kubecell.io/host-namespace': 'true', 'example.com/tier': 'cpu' },
        },
        cells: [{ ...gpuOnly, metadata: { name: 'gpu-cell', namespace: 'platform' } }],
        virtualNodeClasses: [gpuOnly],
      }),
    );
    const allowed = placed('51-virtualcluster-full.yaml', 'team-gpu', 'gpu-cell', 'gpu-tier');
    const response = await validate(admissionReview('CREATE', allowed), lookup, 'platform');
    expect(response.allowed, response.status?.message).to.equal(true);
    expect(lookup.reads).to.deep.equal(['Cell platform/gpu-cell', 'VirtualNodeClass gpu-tier']);

    const refused = placed('51-virtualcluster-full.yaml', 'team-cpu', 'gpu-cell', 'gpu-tier');
    const message =
      (await validate(admissionReview('CREATE', refused), lookup, 'platform')).status?.message ??
      '';
    expect(message).to.include(
      'namespace "team-cpu" may not use Cell "gpu-cell": the Cell\'s spec.namespaceSelector (example.com/tier in (gpu)) does not select it',
    );
    expect(message).to.include(
      'namespace "team-cpu" may not use VirtualNodeClass "gpu-tier": the VirtualNodeClass\'s spec.namespaceSelector (example.com/tier in (gpu)) does not select it',
    );
  });

  it('leaves a missing Cell or class to the feasibility evaluation', async () => {
    const vc = placed('51-virtualcluster-full.yaml', 'tenant-b', 'no-such-cell', 'no-such-class');
    const response = await validate(admissionReview('CREATE', vc));
    expect(response.allowed, response.status?.message).to.equal(true);
  });

  it('says only "not a host namespace" in a namespace the platform did not opt in', async () => {
    const vc = placed('51-virtualcluster-full.yaml', 'default', 'cell1', 'small');
    const response = await validate(
      admissionReview('CREATE', vc),
      fakeLookup({ namespaces: { default: {} } }),
    );
    expect(response.status?.details?.causes?.map((cause) => cause.field)).to.deep.equal([
      'metadata.namespace',
    ]);
  });

  it("checks a plan's update only when it names another Cell or class, and never a VirtualCluster's", async () => {
    const lookup = counting(fakeLookup());
    const plan = placed('41-virtualclusterplan-full.yaml', 'tenant-b', 'cell2', 'cpu-small');
    const relabelled = structuredClone(plan);
    metadata(relabelled).labels = { team: 'b' };
    expect((await validate(admissionReview('UPDATE', relabelled, plan), lookup)).allowed).to.equal(
      true,
    );
    expect(lookup.reads).to.deep.equal([]);

    const bigger = structuredClone(plan);
    spec(bigger).classRef = { name: 'small' };
    const response = await validate(admissionReview('UPDATE', bigger, plan), lookup);
    expect(response.allowed).to.equal(false);
    expect(response.status?.message).to.include(
      'spec.classRef.name: Forbidden: namespace "tenant-b" may not use VirtualNodeClass "small"',
    );
    expect(lookup.reads).to.deep.equal(['VirtualNodeClass small']);

    // A VirtualCluster created before the selector existed (or with the webhook bypassed) can
    // still be updated: its refs cannot change, and nothing is read.
    lookup.reads.length = 0;
    const vc = placed('51-virtualcluster-full.yaml', 'tenant-b', 'cell1', 'small');
    const annotated = structuredClone(vc);
    metadata(annotated).annotations = { note: 'x' };
    expect((await validate(admissionReview('UPDATE', annotated, vc), lookup)).allowed).to.equal(
      true,
    );
    expect(lookup.reads).to.deep.equal([]);
  });

  it('refuses every namespace when the selector is malformed (fails closed)', async () => {
    const broken: PlacementTargetSummary = {
      metadata: { name: 'broken', namespace: 'kubecell-system' },
      spec: { namespaceSelector: { matchExpressions: [{ key: 'tier', operator: 'Gt' }] } },
    };
    const vc = placed('51-virtualcluster-full.yaml', 'tenant-a', 'broken', 'cpu-small');
    const message =
      (await validate(admissionReview('CREATE', vc), fakeLookup({ cells: [broken] }))).status
        ?.message ?? '';
    expect(message).to.include(
      'namespace "tenant-a" may not use Cell "broken": the Cell\'s spec.namespaceSelector is invalid (matchExpressions[0].operator "Gt" is not one of In, NotIn, Exists, DoesNotExist), so it selects no namespace',
    );
  });

  it('denies, naming the lookup, when a Cell or class cannot be read', async () => {
    const inner = fakeLookup();
    const failing: ClusterLookup = {
      ...inner,
      namespaceLabels: (name) => inner.namespaceLabels(name),
      listVirtualClusters: (options) => inner.listVirtualClusters(options),
      getCell: () => Promise.reject(new Error('cells.kubecell.io is forbidden')),
      getVirtualNodeClass: (name) => inner.getVirtualNodeClass(name),
    };
    const response = await validate(
      admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      failing,
    );
    expect(response.allowed).to.equal(false);
    expect(response.status?.code).to.equal(500);
    expect(response.status?.message).to.include(
      'cannot check the rules that need other objects: reading Cell "cell1" in namespace "kubecell-system" failed: cells.kubecell.io is forbidden',
    );
  });

  describe('namespaceNotAllowedError (pure)', () => {
    const target = (selector?: unknown) => ({
      kind: 'Cell' as const,
      field: 'spec.cellRef.name',
      name: 'cell1',
      object: {
        metadata: { name: 'cell1' },
        spec: selector === undefined ? {} : { namespaceSelector: selector },
      },
    });

    it('an absent selector restricts nothing; an empty one selects every namespace', () => {
      expect(namespaceNotAllowedError('VirtualCluster', 'x', {}, target())).to.equal(undefined);
      expect(namespaceNotAllowedError('VirtualCluster', 'x', {}, target({}))).to.equal(undefined);
      expect(
        namespaceNotAllowedError('VirtualCluster', 'x', {}, { ...target(), object: undefined }),
      ).to.equal(undefined);
    });

    it('says nothing about a namespace that does not exist (another rule does)', () => {
      expect(
        namespaceNotAllowedError(
          'VirtualCluster',
          'x',
          undefined,
          target({ matchLabels: { a: 'b' } }),
        ),
      ).to.equal(undefined);
    });

    it('shortens a long selector in its message', () => {
      const values = Array.from({ length: 64 }, (_, i) => `tenant-${i}-${'x'.repeat(40)}`);
      const error = namespaceNotAllowedError(
        'VirtualCluster',
        'x',
        {},
        target({
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values }],
        }),
      );
      expect(error?.message.length).to.be.lessThan(800);
      expect(error?.message).to.include('…) does not select it');
    });
  });

  it('an in-memory lookup answers Cells by namespace and name', async () => {
    const lookup = createInMemoryLookup({
      cells: [{ metadata: { name: 'c', namespace: 'a' } }],
    });
    expect(await lookup.getCell('a', 'c')).to.deep.equal({
      metadata: { name: 'c', namespace: 'a' },
    });
    expect(await lookup.getCell('b', 'c')).to.equal(undefined);
    expect(await lookup.getVirtualNodeClass('c')).to.equal(undefined);
  });
});
