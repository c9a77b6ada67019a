import { expect } from 'chai';
import { Registry } from 'prom-client';
import request from 'supertest';
import { captureLogger } from '../server/testing.js';
import { createAdmissionApp } from './app.js';
import { API_VERSION, kindInfo } from '../api/kinds.js';
import type { ClusterLookup, VirtualClusterSummary } from './lookup.js';
import { createAdmissionMetrics } from './metrics.js';
import { applyMutationPatch, type JsonPatchOperation } from './mutate.js';
import type { AdmissionReview } from './review.js';
import { admissionReview, fakeLookup, loadSamples, sample, type Json } from './testing.js';

interface Harness {
  app: ReturnType<typeof createAdmissionApp>;
  registry: Registry;
  logs: ReturnType<typeof captureLogger>;
}

function harness(lookup: ClusterLookup = fakeLookup(), bodyLimitBytes?: number): Harness {
  const logs = captureLogger();
  const registry = new Registry();
  const app = createAdmissionApp({
    lookup,
    logger: logs.logger,
    metrics: createAdmissionMetrics(registry),
    lookupTimeoutMs: 200,
    bodyLimitBytes,
  });
  return { app, registry, logs };
}

async function review(
  h: Harness,
  webhook: 'validate' | 'mutate',
  body: Json,
): Promise<AdmissionReview['response']> {
  const res = await request(h.app).post(`/admission/${webhook}`).send(body);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  const answer = res.body as AdmissionReview;
  expect(answer.apiVersion).to.equal('admission.k8s.io/v1');
  expect(answer.kind).to.equal('AdmissionReview');
  expect(answer.response.uid).to.equal((body.request as { uid: string }).uid);
  return answer.response;
}

/** The denial message of a validate call (fails when the object is allowed). */
async function denial(h: Harness, body: Json): Promise<string> {
  const response = await review(h, 'validate', body);
  expect(response.allowed, 'expected a denial').to.equal(false);
  return response.status?.message ?? '';
}

function patchOf(response: AdmissionReview['response']): JsonPatchOperation[] {
  if (response.patch === undefined) return [];
  expect(response.patchType).to.equal('JSONPatch');
  return JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as JsonPatchOperation[];
}

const spec = (object: Json): Json => object.spec as Json;
const metadata = (object: Json): Json => object.metadata as Json;

function resolvedVc(
  name: string,
  namespace: string,
  cell: string,
  uid?: string,
): VirtualClusterSummary {
  return {
    metadata: { name, namespace, labels: { 'kubecell.io/cell': cell } },
    status: { resolved: { cell: { name: cell, ...(uid ? { uid } : {}) } } },
  };
}

describe('admission webhook (hooks/admission)', () => {
  describe('every sample passes', () => {
    const kubecell = loadSamples().filter((s) => kindInfo(s.object.apiVersion, s.object.kind));

    it('covers every KubeCell sample file', () => {
      expect(kubecell.length).to.be.greaterThan(9);
      expect(new Set(kubecell.map((s) => s.object.kind)).size).to.equal(5);
    });

    it('validates and labels every sample on CREATE and on a no-op UPDATE', async () => {
      const h = harness();
      for (const { file, object } of kubecell) {
        const mutated = await review(h, 'mutate', admissionReview('CREATE', object));
        expect(mutated.allowed, file).to.equal(true);
        const labelled = applyMutationPatch(object, patchOf(mutated));
        const created = await review(h, 'validate', admissionReview('CREATE', labelled));
        expect(created.allowed, `${file}: ${created.status?.message}`).to.equal(true);
        const updated = await review(h, 'validate', admissionReview('UPDATE', labelled, labelled));
        expect(updated.allowed, `${file}: ${updated.status?.message}`).to.equal(true);
        // Labelled once, the object needs no further patch.
        const again = await review(h, 'mutate', admissionReview('UPDATE', labelled, labelled));
        expect(again.patch, file).to.equal(undefined);
      }
    });
  });

  describe('schema and CEL rules, in the apiserver words', () => {
    const h = harness();

    it('rejects an unknown field with its path', async () => {
      const cell = sample('11-cell-full.yaml');
      (spec(cell).machineProfile as Json).devics = [];
      spec(cell).foo = 1;
      expect(await denial(h, admissionReview('CREATE', cell))).to.equal(
        'Cell.kubecell.io "cell1" is invalid: [' +
          'spec.foo: Forbidden: unknown field (the apiserver would silently drop it); check its spelling and indentation, ' +
          'spec.machineProfile.devics: Forbidden: unknown field (the apiserver would silently drop it); check its spelling and indentation]',
      );
    });

    it('reports a missing field as Required value, with details.causes', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      delete spec(vc).classRef;
      const response = await review(h, 'validate', admissionReview('CREATE', vc));
      expect(response.allowed).to.equal(false);
      expect(response.status).to.deep.equal({
        code: 422,
        reason: 'Invalid',
        message: 'VirtualCluster.kubecell.io "team-a" is invalid: spec.classRef: Required value',
        details: {
          group: 'kubecell.io',
          kind: 'VirtualCluster',
          name: 'team-a',
          causes: [
            { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.classRef' },
          ],
        },
      });
    });

    it('reports enums as Unsupported value and types as Invalid value', async () => {
      const pool = sample('35-gpucellpool-full.yaml');
      (spec(pool).provisioner as Json).type = 'Ironic';
      spec(pool).replicas = 'two';
      const message = await denial(h, admissionReview('CREATE', pool));
      expect(message).to.include(
        'spec.provisioner.type: Unsupported value: "Ironic": supported values: "KubeVirt", "ClusterAPI"',
      );
      expect(message).to.include('spec.replicas: Invalid value: "two": must be of type integer');
    });

    it('names map keys in brackets, as the apiserver does', async () => {
      const cls = sample('21-virtualnodeclass-full.yaml');
      ((spec(cls).entitlement as Json).workloadHard as Json)['requests.nvidia.com/gpu'] = true;
      expect(await denial(h, admissionReview('CREATE', cls))).to.equal(
        'VirtualNodeClass.kubecell.io "small" is invalid: ' +
          'spec.entitlement.workloadHard[requests.nvidia.com/gpu]: Invalid value: true: must be of type integer or string',
      );
    });

    it('evaluates the CEL rules of the schema (GPUCellPool claims)', async () => {
      const pool = sample('35-gpucellpool-full.yaml');
      (spec(pool).gpu as Json).resourceClaimName = 'a100-0';
      const message = await denial(h, admissionReview('CREATE', pool));
      expect(message).to.equal(
        'GPUCellPool.kubecell.io "a100" is invalid: [' +
          'spec.replicas: Invalid value: "object": spec.replicas must be 0 or 1 when ' +
          'spec.gpu.resourceClaimName is set: a named ResourceClaim holds one device for one ' +
          'cell; use spec.gpu.resourceClaimTemplateName to run more cells, ' +
          'spec.autoscaling.maxReplicas: Invalid value: "object": spec.autoscaling.maxReplicas ' +
          'must be at most 1 when spec.gpu.resourceClaimName is set: a named ResourceClaim ' +
          'holds one device for one cell; use spec.gpu.resourceClaimTemplateName to scale ' +
          'further, ' +
          'spec.gpu: Invalid value: "object": spec.gpu must set exactly one of ' +
          'resourceClaimName (one existing ResourceClaim, at most one cell) or ' +
          'resourceClaimTemplateName (one claim per cell)]',
      );
    });

    it('prints a CEL rule with reason FieldValueRequired as Required value', async () => {
      const pool = sample('35-gpucellpool-full.yaml');
      delete spec(pool).bootstrap;
      expect(await denial(h, admissionReview('CREATE', pool))).to.equal(
        'GPUCellPool.kubecell.io "a100" is invalid: spec.bootstrap: Required value: spec.bootstrap ' +
          'with provider Opaque and a joinSecretRef is required when spec.provisioner.type is ' +
          'KubeVirt: the VMs get their join data only from the rendered user-data',
      );
    });

    it('runs transition rules on UPDATE with the old object (VirtualCluster refs)', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      const moved = structuredClone(vc);
      (spec(moved).cellRef as Json).name = 'cell2';
      expect(await denial(h, admissionReview('UPDATE', moved, vc))).to.equal(
        'VirtualCluster.kubecell.io "team-a" is invalid: spec.cellRef: Invalid value: "object": ' +
          'spec.cellRef is immutable: delete and recreate the VirtualCluster to move it to another Cell',
      );
      // The same object is fine as a creation.
      expect((await review(h, 'validate', admissionReview('CREATE', moved))).allowed).to.equal(
        true,
      );
    });

    it('reports duplicate keys of list-map lists', async () => {
      const cell = sample('11-cell-full.yaml');
      const devices = (spec(cell).machineProfile as Json).devices as Json[];
      devices.push({ name: 'gpu', resourceName: 'nvidia.com/mig-1g.10gb' });
      expect(await denial(h, admissionReview('CREATE', cell))).to.equal(
        'Cell.kubecell.io "cell1" is invalid: spec.machineProfile.devices[1]: Duplicate value: {"name":"gpu"}',
      );
    });

    it('ratchets on UPDATE: an error the stored object already had does not block', async () => {
      // As if a rule had been tightened after this object was stored.
      const cls = sample('20-virtualnodeclass-minimal.yaml');
      ((spec(cls).entitlement as Json).workloadHard as Json)['requests.cpu'] = '2 cores';
      const finalizing = structuredClone(cls);
      metadata(finalizing).finalizers = [
        'metacontroller.io/decoratorcontroller-kubecell-class-usage',
      ];
      expect(
        (await review(h, 'validate', admissionReview('UPDATE', finalizing, cls))).allowed,
      ).to.equal(true);
      // A new error is still reported.
      const worse = structuredClone(finalizing);
      spec(worse).storageClassName = 'Not_A_Name';
      expect(await denial(h, admissionReview('UPDATE', worse, cls))).to.match(
        /^VirtualNodeClass\.kubecell\.io "cpu-small" is invalid: spec\.storageClassName: Invalid value: "Not_A_Name": must match pattern/,
      );
    });
  });

  describe('cross-object rules', () => {
    it('Cell: only in the controller namespace', async () => {
      const cell = sample('11-cell-full.yaml');
      metadata(cell).namespace = 'default';
      expect(await denial(harness(), admissionReview('CREATE', cell))).to.equal(
        'Cell.kubecell.io "cell1" is invalid: metadata.namespace: Invalid value: "default": a Cell ' +
          'must be created in the KubeCell controller namespace "kubecell-system"; set ' +
          'metadata.namespace: kubecell-system',
      );
    });

    it('Cell: the controller namespace is configurable', async () => {
      const logs = captureLogger();
      const app = createAdmissionApp({
        lookup: fakeLookup(),
        logger: logs.logger,
        controllerNamespace: 'platform',
      });
      const cell = sample('11-cell-full.yaml');
      metadata(cell).namespace = 'platform';
      const res = await request(app)
        .post('/admission/validate')
        .send(admissionReview('CREATE', cell));
      expect((res.body as AdmissionReview).response.allowed).to.equal(true);
    });

    describe('Cell: managedClusterRef and machineProfile.name frozen once resolved', () => {
      const cell = (): Json => {
        const c = sample('11-cell-full.yaml');
        metadata(c).uid = 'cell1-uid';
        return c;
      };
      const edited = (): Json => {
        const c = cell();
        (spec(c).managedClusterRef as Json).name = 'cell9';
        (spec(c).machineProfile as Json).name = 'h100';
        return c;
      };

      it('denies while a VirtualCluster has resolved the Cell', async () => {
        const h = harness(
          fakeLookup({
            virtualClusters: [
              resolvedVc('team-a', 'tenant-a', 'cell1', 'cell1-uid'),
              resolvedVc('team-c', 'tenant-c', 'cell1'),
            ],
          }),
        );
        expect(await denial(h, admissionReview('UPDATE', edited(), cell()))).to.equal(
          'Cell.kubecell.io "cell1" is invalid: [' +
            'spec.managedClusterRef.name: Invalid value: "cell9": field is immutable while ' +
            'VirtualClusters are placed on this Cell (tenant-a/team-a, tenant-c/team-c); it was ' +
            '"cell1" when they were resolved: delete those VirtualClusters first, or create another Cell, ' +
            'spec.machineProfile.name: Invalid value: "h100": field is immutable while ' +
            'VirtualClusters are placed on this Cell (tenant-a/team-a, tenant-c/team-c); it was ' +
            '"a100" when they were resolved: delete those VirtualClusters first, or create another Cell]',
        );
      });

      it('allows when no VirtualCluster has resolved it (labelled only, or another incarnation)', async () => {
        const pending: VirtualClusterSummary = {
          metadata: {
            name: 'team-p',
            namespace: 'tenant-p',
            labels: { 'kubecell.io/cell': 'cell1' },
          },
        };
        const h = harness(
          fakeLookup({
            virtualClusters: [
              pending,
              resolvedVc('team-old', 'tenant-o', 'cell1', 'uid-of-a-deleted-cell1'),
              resolvedVc('team-b', 'tenant-b', 'cell2'),
            ],
          }),
        );
        const response = await review(h, 'validate', admissionReview('UPDATE', edited(), cell()));
        expect(response.allowed, response.status?.message).to.equal(true);
      });

      it('denies a delivery change while a VirtualCluster has resolved the Cell (absent = Local)', async () => {
        const h = harness(
          fakeLookup({ virtualClusters: [resolvedVc('team-a', 'tenant-a', 'cell1', 'cell1-uid')] }),
        );
        const remote = cell();
        spec(remote).delivery = 'ManifestWork';
        expect(await denial(h, admissionReview('UPDATE', remote, cell()))).to.equal(
          'Cell.kubecell.io "cell1" is invalid: ' +
            'spec.delivery: Invalid value: "ManifestWork": field is immutable while ' +
            'VirtualClusters are placed on this Cell (tenant-a/team-a); it was ' +
            '"Local" when they were resolved: delete those VirtualClusters first, or create another Cell',
        );
      });

      it('allows writing out the default delivery, and changing it while nothing resolved the Cell', async () => {
        const inUse = harness(
          fakeLookup({ virtualClusters: [resolvedVc('team-a', 'tenant-a', 'cell1', 'cell1-uid')] }),
        );
        const local = cell();
        spec(local).delivery = 'Local';
        const same = await review(inUse, 'validate', admissionReview('UPDATE', local, cell()));
        expect(same.allowed, same.status?.message).to.equal(true);
        const remote = cell();
        spec(remote).delivery = 'ManifestWork';
        const unused = await review(
          harness(fakeLookup({ virtualClusters: [resolvedVc('team-b', 'tenant-b', 'cell2')] })),
          'validate',
          admissionReview('UPDATE', remote, cell()),
        );
        expect(unused.allowed, unused.status?.message).to.equal(true);
      });

      it('reads nothing when the frozen fields do not change', async () => {
        let calls = 0;
        const lookup: ClusterLookup = {
          namespaceLabels: async () => {
            calls++;
            return {};
          },
          listVirtualClusters: async () => {
            calls++;
            return [resolvedVc('team-a', 'tenant-a', 'cell1')];
          },
          getCell: async () => {
            calls++;
            return undefined;
          },
          getVirtualNodeClass: async () => {
            calls++;
            return undefined;
          },
        };
        const changedDevices = cell();
        ((spec(changedDevices).machineProfile as Json).devices as Json[]).push({
          name: 'mig',
          resourceName: 'nvidia.com/mig-1g.10gb',
        });
        const response = await review(
          harness(lookup),
          'validate',
          admissionReview('UPDATE', changedDevices, cell()),
        );
        expect(response.allowed).to.equal(true);
        expect(calls).to.equal(0);
      });
    });

    it('GPUCellPool: a provisioner label that contradicts the type is denied; none is fine', async () => {
      const h = harness();
      const pool = sample('35-gpucellpool-full.yaml');
      metadata(pool).labels = { 'kubecell.io/provisioner': 'cluster-api' };
      const message = await denial(h, admissionReview('CREATE', pool));
      expect(message).to.include(
        'metadata.labels[kubecell.io/provisioner]: Invalid value: "cluster-api": must be "kubevirt" ' +
          'for spec.provisioner.type KubeVirt',
      );
      expect(message).to.include('kubecell-gpucellpool-kubevirt');
      delete metadata(pool).labels;
      expect((await review(h, 'validate', admissionReview('CREATE', pool))).allowed).to.equal(true);
      const capi = sample('36-gpucellpool-clusterapi.yaml');
      metadata(capi).labels = { 'kubecell.io/provisioner': 'kubevirt' };
      expect(await denial(h, admissionReview('CREATE', capi))).to.include(
        'must be "cluster-api" for spec.provisioner.type ClusterAPI',
      );
    });

    it('GPUCellPool: the provisioner label ratchets on UPDATE', async () => {
      const h = harness();
      const stored = sample('35-gpucellpool-full.yaml');
      metadata(stored).labels = { 'kubecell.io/provisioner': 'cluster-api' };
      // Stored with the contradiction (the webhook was bypassed): a finalizer can still go.
      const updated = structuredClone(stored);
      metadata(updated).finalizers = [];
      expect(
        (await review(h, 'validate', admissionReview('UPDATE', updated, stored))).allowed,
      ).to.equal(true);
      // Changing a right label to a wrong one is denied.
      const right = sample('35-gpucellpool-full.yaml');
      expect(await denial(h, admissionReview('UPDATE', stored, right))).to.include(
        'must be "kubevirt"',
      );
    });

    it('VirtualCluster: only in a host namespace, with the command that fixes it', async () => {
      const h = harness(
        fakeLookup({
          namespaces: { 'team-x': {}, 'team-y': { 'kubecell.io/host-namespace': 'false' } },
        }),
      );
      const vc = sample('51-virtualcluster-full.yaml');
      metadata(vc).namespace = 'team-x';
      expect(await denial(h, admissionReview('CREATE', vc))).to.equal(
        'VirtualCluster.kubecell.io "team-a" is invalid: metadata.namespace: Forbidden: namespace ' +
          '"team-x" is not a KubeCell host namespace: a VirtualCluster may only be created in a host ' +
          'namespace, one labelled kubecell.io/host-namespace=true; a platform administrator can ' +
          'label it with: kubectl label namespace team-x kubecell.io/host-namespace=true',
      );
      metadata(vc).namespace = 'team-y';
      expect(await denial(h, admissionReview('CREATE', vc))).to.equal(
        'VirtualCluster.kubecell.io "team-a" is invalid: metadata.namespace: Forbidden: namespace ' +
          '"team-y" is not a KubeCell host namespace (its label is kubecell.io/host-namespace=false): ' +
          'a VirtualCluster may only be created in a host namespace, one labelled ' +
          'kubecell.io/host-namespace=true; a platform administrator can label it with: kubectl ' +
          'label namespace team-y kubecell.io/host-namespace=true --overwrite',
      );
      metadata(vc).namespace = 'nowhere';
      expect(await denial(h, admissionReview('CREATE', vc))).to.include(
        'metadata.namespace: Forbidden: namespace "nowhere" does not exist',
      );
    });

    it('VirtualClusterPlan: only in a host namespace', async () => {
      const h = harness(fakeLookup({ namespaces: { default: {} } }));
      const plan = sample('41-virtualclusterplan-full.yaml');
      metadata(plan).namespace = 'default';
      expect(await denial(h, admissionReview('CREATE', plan))).to.equal(
        'VirtualClusterPlan.kubecell.io "small-on-cell1" is invalid: metadata.namespace: Forbidden: ' +
          'namespace "default" is not a KubeCell host namespace: a VirtualClusterPlan may only be ' +
          'created in a host namespace, one labelled kubecell.io/host-namespace=true; a platform ' +
          'administrator can label it with: kubectl label namespace default kubecell.io/host-namespace=true',
      );
    });

    it('VirtualCluster: at most one per namespace, checked on CREATE', async () => {
      const existing: VirtualClusterSummary = {
        metadata: { name: 'team-a', namespace: 'tenant-a' },
      };
      const h = harness(fakeLookup({ virtualClusters: [existing] }));
      const second = sample('51-virtualcluster-full.yaml');
      metadata(second).name = 'team-a2';
      expect(await denial(h, admissionReview('CREATE', second))).to.equal(
        'VirtualCluster.kubecell.io "team-a2" is invalid: metadata.namespace: Forbidden: namespace ' +
          '"tenant-a" already hosts VirtualCluster "team-a": a host namespace hosts at most one ' +
          'VirtualCluster; create this one in another host namespace',
      );
      // The existing one can still be updated, and a plan can sit beside it.
      const first = sample('51-virtualcluster-full.yaml');
      expect(
        (await review(h, 'validate', admissionReview('UPDATE', first, first))).allowed,
      ).to.equal(true);
      const plan = sample('41-virtualclusterplan-full.yaml');
      expect((await review(h, 'validate', admissionReview('CREATE', plan))).allowed).to.equal(true);
    });

    it('says when the other VirtualCluster is being deleted', async () => {
      const leaving: VirtualClusterSummary = {
        metadata: { name: 'old', namespace: 'tenant-a', deletionTimestamp: '2026-11-30T00:00:00Z' },
      };
      const h = harness(fakeLookup({ virtualClusters: [leaving] }));
      expect(
        await denial(h, admissionReview('CREATE', sample('51-virtualcluster-full.yaml'))),
      ).to.include('already hosts VirtualCluster "old" (being deleted; retry once it is gone)');
    });

    it('denies, saying so, when a lookup fails or times out', async () => {
      const failing: ClusterLookup = {
        namespaceLabels: async () => {
          throw new Error('connect ECONNREFUSED 10.96.0.1:443');
        },
        listVirtualClusters: async () => [],
        getCell: async () => undefined,
        getVirtualNodeClass: async () => undefined,
      };
      const response = await review(
        harness(failing),
        'validate',
        admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      );
      expect(response.allowed).to.equal(false);
      expect(response.status?.code).to.equal(500);
      expect(response.status?.message).to.equal(
        'VirtualCluster.kubecell.io "team-a": cannot check the rules that need other objects: ' +
          'reading Namespace "tenant-a" failed: connect ECONNREFUSED 10.96.0.1:443. The request is ' +
          'refused because the KubeCell webhook fails closed (failurePolicy: Fail); retry, and if ' +
          'this persists check the kubecell-hooks logs and its RBAC.',
      );

      const hanging: ClusterLookup = {
        namespaceLabels: async () => ({ 'kubecell.io/host-namespace': 'true' }),
        listVirtualClusters: () => new Promise(() => undefined),
        getCell: async () => undefined,
        getVirtualNodeClass: async () => undefined,
      };
      const slow = await review(
        harness(hanging),
        'validate',
        admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      );
      expect(slow.allowed).to.equal(false);
      expect(slow.status?.message).to.include(
        'listing VirtualClusters in namespace "tenant-a" failed: no answer within 200 ms',
      );
    });

    it('allows DELETE and CONNECT without looking anything up', async () => {
      const lookup: ClusterLookup = {
        namespaceLabels: () => Promise.reject(new Error('must not be called')),
        listVirtualClusters: () => Promise.reject(new Error('must not be called')),
        getCell: () => Promise.reject(new Error('must not be called')),
        getVirtualNodeClass: () => Promise.reject(new Error('must not be called')),
      };
      const h = harness(lookup);
      const vc = sample('51-virtualcluster-full.yaml');
      expect((await review(h, 'validate', admissionReview('DELETE', null, vc))).allowed).to.equal(
        true,
      );
      expect((await review(h, 'validate', admissionReview('CONNECT', null, vc))).allowed).to.equal(
        true,
      );
      expect((await review(h, 'mutate', admissionReview('DELETE', null, vc))).allowed).to.equal(
        true,
      );
    });
  });

  describe('mutation', () => {
    const h = harness();

    it('adds the labels when metadata.labels is missing, and a new VirtualCluster its finalizer', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      const response = await review(h, 'mutate', admissionReview('CREATE', vc));
      expect(response.allowed).to.equal(true);
      expect(patchOf(response)).to.deep.equal([
        {
          op: 'add',
          path: '/metadata/labels',
          value: { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'small' },
        },
        {
          op: 'add',
          path: '/metadata/finalizers',
          value: ['metacontroller.io/compositecontroller-kubecell-virtualcluster'],
        },
      ]);
    });

    it("puts Metacontroller's finalizer on a VirtualCluster at CREATE only, beside the others", async () => {
      const finalizer = 'metacontroller.io/compositecontroller-kubecell-virtualcluster';
      const vc = sample('51-virtualcluster-full.yaml');
      metadata(vc).labels = { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'small' };
      metadata(vc).finalizers = ['example.com/keep'];
      const patch = patchOf(await review(h, 'mutate', admissionReview('CREATE', vc)));
      expect(patch).to.deep.equal([
        { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
      ]);
      const created = applyMutationPatch(vc, patch);
      expect(metadata(created).finalizers).to.deep.equal(['example.com/keep', finalizer]);
      // Already there: nothing.
      expect(patchOf(await review(h, 'mutate', admissionReview('CREATE', created)))).to.deep.equal(
        [],
      );
      // Metacontroller removes it with an UPDATE once finalized: never put back.
      const finalized = structuredClone(created);
      metadata(finalized).finalizers = ['example.com/keep'];
      expect(
        patchOf(await review(h, 'mutate', admissionReview('UPDATE', finalized, created))),
      ).to.deep.equal([]);
      // Plans have no finalize hook, so no finalizer.
      const plan = sample('41-virtualclusterplan-full.yaml');
      metadata(plan).labels = { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'small' };
      expect(patchOf(await review(h, 'mutate', admissionReview('CREATE', plan)))).to.deep.equal([]);
    });

    it('adds one label escaping "/" as ~1, corrects a wrong one, keeps the others', async () => {
      const plan = sample('41-virtualclusterplan-full.yaml');
      metadata(plan).labels = { team: 'a', 'kubecell.io/class': 'large' };
      const patch = patchOf(await review(h, 'mutate', admissionReview('UPDATE', plan, plan)));
      expect(patch).to.deep.equal([
        { op: 'add', path: '/metadata/labels/kubecell.io~1cell', value: 'cell1' },
        { op: 'replace', path: '/metadata/labels/kubecell.io~1class', value: 'small' },
      ]);
      const patched = applyMutationPatch(plan, patch);
      expect(metadata(patched).labels).to.deep.equal({
        team: 'a',
        'kubecell.io/class': 'small',
        'kubecell.io/cell': 'cell1',
      });
      const again = await review(h, 'mutate', admissionReview('UPDATE', patched, plan));
      expect(again).to.deep.equal({ uid: again.uid, allowed: true });
    });

    it('drops kubecell.io/cell from a plan that now chooses among Cells by selector', async () => {
      const plan = sample('41-virtualclusterplan-full.yaml');
      metadata(plan).labels = {
        team: 'a',
        'kubecell.io/cell': 'cell1',
        'kubecell.io/class': 'small',
      };
      delete spec(plan).cellRef;
      spec(plan).cellSelector = { matchLabels: { tier: 'gpu' } };
      const patch = patchOf(await review(h, 'mutate', admissionReview('UPDATE', plan, plan)));
      expect(patch).to.deep.equal([{ op: 'remove', path: '/metadata/labels/kubecell.io~1cell' }]);
      expect(metadata(applyMutationPatch(plan, patch)).labels).to.deep.equal({
        team: 'a',
        'kubecell.io/class': 'small',
      });
      const validated = await review(
        h,
        'validate',
        admissionReview('UPDATE', applyMutationPatch(plan, patch), plan),
      );
      expect(validated.allowed, validated.status?.message).to.equal(true);
    });

    it('labels a VirtualCluster with a selector with its resolved Cell only, kept through a replace without status', async () => {
      const vc = sample('52-virtualcluster-selector.yaml');
      // Before resolution: no kubecell.io/cell, and one set by hand is taken away.
      metadata(vc).labels = { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'cpu-small' };
      expect(patchOf(await review(h, 'mutate', admissionReview('CREATE', vc)))).to.deep.include({
        op: 'remove',
        path: '/metadata/labels/kubecell.io~1cell',
      });
      // Resolved: the label names status.resolved.cell (what the cell-label decorator writes).
      const resolved = structuredClone(vc);
      resolved.status = { resolved: { cell: { name: 'cell2' } } };
      metadata(resolved).labels = { 'kubecell.io/class': 'cpu-small' };
      expect(
        patchOf(await review(h, 'mutate', admissionReview('UPDATE', resolved, resolved))),
      ).to.deep.equal([{ op: 'add', path: '/metadata/labels/kubecell.io~1cell', value: 'cell2' }]);
      // A replace that leaves the status out keeps it: the stored object has it.
      const replaced = structuredClone(vc);
      delete replaced.status;
      metadata(replaced).labels = { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': 'cpu-small' };
      expect(
        patchOf(await review(h, 'mutate', admissionReview('UPDATE', replaced, resolved))),
      ).to.deep.equal([
        { op: 'replace', path: '/metadata/labels/kubecell.io~1cell', value: 'cell2' },
      ]);
    });

    it('refuses a plan with both or neither of cellRef and cellSelector, naming the fix', async () => {
      const both = sample('41-virtualclusterplan-full.yaml');
      spec(both).cellSelector = { matchLabels: { tier: 'gpu' } };
      expect(await denial(h, admissionReview('CREATE', both))).to.contain(
        'exactly one of spec.cellRef (one Cell) and spec.cellSelector (choose among Cells by label) must be set',
      );
      const spread = sample('41-virtualclusterplan-full.yaml');
      delete spec(spread).cellRef;
      spec(spread).cellSelector = {};
      spec(spread).placementPolicy = { type: 'Spread' };
      expect(await denial(h, admissionReview('CREATE', spread))).to.contain(
        'placementPolicy.spreadKey is required with type Spread',
      );
    });

    it('labels a GPUCellPool with kubecell.io/provisioner from its type, and corrects it', async () => {
      for (const [file, value] of [
        ['35-gpucellpool-full.yaml', 'kubevirt'],
        ['36-gpucellpool-clusterapi.yaml', 'cluster-api'],
      ] as const) {
        const pool = sample(file);
        delete metadata(pool).labels;
        expect(
          patchOf(await review(h, 'mutate', admissionReview('CREATE', pool))),
          file,
        ).to.deep.equal([
          { op: 'add', path: '/metadata/labels', value: { 'kubecell.io/provisioner': value } },
        ]);
        metadata(pool).labels = { team: 'gpu', 'kubecell.io/provisioner': 'other' };
        expect(
          patchOf(await review(h, 'mutate', admissionReview('UPDATE', pool, pool))),
          file,
        ).to.deep.equal([
          { op: 'replace', path: '/metadata/labels/kubecell.io~1provisioner', value },
        ]);
      }
    });

    it('leaves the other kinds alone', async () => {
      for (const file of ['11-cell-full.yaml', '21-virtualnodeclass-full.yaml']) {
        const response = await review(h, 'mutate', admissionReview('CREATE', sample(file)));
        expect(response, file).to.deep.equal({ uid: response.uid, allowed: true });
      }
    });

    it('does not label from a ref that is missing or not a label value', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      delete spec(vc).classRef;
      (spec(vc).cellRef as Json).name = 'x'.repeat(64);
      expect(patchOf(await review(h, 'mutate', admissionReview('UPDATE', vc, vc)))).to.deep.equal(
        [],
      );
    });
  });

  describe('bad input', () => {
    const h = harness(fakeLookup(), 64 * 1024);
    const post = (webhook: string) => request(h.app).post(`/admission/${webhook}`);

    it('answers 400 to a body that is not an AdmissionReview', async () => {
      const cases: Array<[unknown, string]> = [
        [[1, 2], 'request body must be an AdmissionReview object'],
        [{ kind: 'Pod' }, 'request body must be an AdmissionReview, got kind "Pod"'],
        [
          {
            apiVersion: 'admission.k8s.io/v1beta1',
            kind: 'AdmissionReview',
            request: { uid: 'u' },
          },
          'AdmissionReview apiVersion "admission.k8s.io/v1beta1" is not supported; only admission.k8s.io/v1 is (set admissionReviewVersions: [v1] in the webhook configuration)',
        ],
        [
          { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
          'AdmissionReview has no request object',
        ],
        [
          {
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            request: { operation: 'CREATE' },
          },
          'AdmissionReview request.uid is required (a non-empty string)',
        ],
      ];
      for (const [body, error] of cases) {
        for (const webhook of ['validate', 'mutate']) {
          const res = await post(webhook).send(body as object);
          expect(res.status, error).to.equal(400);
          expect(res.body).to.deep.equal({ error });
        }
      }
    });

    it('answers 400 to malformed JSON, 415 to another content type, 405 to GET', async () => {
      const malformed = await post('validate')
        .set('content-type', 'application/json')
        .send('{"request":');
      expect(malformed.status).to.equal(400);
      expect((malformed.body as { error: string }).error).to.match(
        /^request body is not valid JSON/,
      );
      const yaml = await post('validate')
        .set('content-type', 'application/yaml')
        .send('kind: AdmissionReview');
      expect(yaml.status).to.equal(415);
      const empty = await post('mutate');
      expect(empty.status).to.equal(400);
      expect(empty.body).to.deep.equal({
        error: 'request body is required: an admission.k8s.io/v1 AdmissionReview',
      });
      const get = await request(h.app).get('/admission/validate');
      expect(get.status).to.equal(405);
      expect(get.headers.allow).to.equal('POST');
      expect((await request(h.app).post('/admission/other').send({})).status).to.equal(404);
    });

    it('answers 415 to a compressed review, without inflating it', async () => {
      for (const webhook of ['validate', 'mutate']) {
        const res = await post(webhook)
          .set('content-type', 'application/json')
          .set('content-encoding', 'gzip')
          .send(JSON.stringify(admissionReview('CREATE', sample('51-virtualcluster-full.yaml'))));
        expect(res.status).to.equal(415);
        expect((res.body as { error: string }).error).to.match(
          /^request body has Content-Encoding: gzip; the KubeCell hook server accepts only uncompressed bodies/,
        );
      }
    });

    it('answers 413 to an oversized body', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      metadata(vc).annotations = { big: 'x'.repeat(70 * 1024) };
      const res = await post('validate').send(admissionReview('CREATE', vc));
      expect(res.status).to.equal(413);
      expect((res.body as { error: string }).error).to.match(
        /^AdmissionReview body \(\d+ bytes\) exceeds the limit of 64kb; the apiserver never sends one this large/,
      );
    });

    it('denies, with a reason, a review of a kind it does not serve', async () => {
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } };
      const body = admissionReview('CREATE', pod);
      (body.request as Json).kind = { group: '', version: 'v1', kind: 'Pod' };
      for (const webhook of ['validate', 'mutate'] as const) {
        const response = await review(h, webhook, body);
        expect(response.allowed).to.equal(false);
        expect(response.status).to.deep.equal({
          code: 400,
          reason: 'BadRequest',
          message:
            'this webhook serves kubecell.io/v1alpha1 Cell, kubecell.io/v1alpha1 GPUCellPool, ' +
            'kubecell.io/v1alpha1 VirtualCluster, kubecell.io/v1alpha1 VirtualClusterPlan, ' +
            'kubecell.io/v1alpha1 VirtualNodeClass; got /v1 Pod: check the rules of the webhook configuration',
        });
      }
    });

    it('denies a review without the objects its operation needs, or with an unknown operation', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      const noObject = admissionReview('CREATE', vc);
      (noObject.request as Json).object = null;
      expect((await review(h, 'validate', noObject)).status?.message).to.equal(
        'request.object is required for CREATE',
      );
      const noOld = admissionReview('UPDATE', vc);
      expect((await review(h, 'validate', noOld)).status?.message).to.equal(
        'request.oldObject is required for UPDATE',
      );
      const patchOp = admissionReview('CREATE', vc);
      (patchOp.request as Json).operation = 'PATCH';
      expect((await review(h, 'validate', patchOp)).status?.message).to.equal(
        'request.operation "PATCH" is not one of CREATE, UPDATE, DELETE, CONNECT',
      );
    });

    it('denies an object whose apiVersion does not match its kind', async () => {
      const vc = sample('51-virtualcluster-full.yaml');
      vc.apiVersion = 'kubecell.io/v1beta1';
      expect(await denial(h, admissionReview('CREATE', vc))).to.equal(
        `VirtualCluster.kubecell.io "team-a" is invalid: apiVersion: Unsupported value: "kubecell.io/v1beta1": supported values: "${API_VERSION}"`,
      );
    });

    it('survives a webhook bug: denies with the error and keeps serving', async () => {
      const broken = harness({
        namespaceLabels: async () => ({ 'kubecell.io/host-namespace': 'true' }),
        listVirtualClusters: async () => null as unknown as VirtualClusterSummary[],
        getCell: async () => undefined,
        getVirtualNodeClass: async () => undefined,
      });
      const response = await review(
        broken,
        'validate',
        admissionReview('CREATE', sample('51-virtualcluster-full.yaml')),
      );
      expect(response.allowed).to.equal(false);
      expect(response.status?.code).to.equal(500);
      expect(response.status?.message).to.match(/^the KubeCell validate webhook failed: /);
      const next = await review(
        broken,
        'validate',
        admissionReview('CREATE', sample('21-virtualnodeclass-full.yaml')),
      );
      expect(next.allowed).to.equal(true);
      expect((await request(broken.app).get('/healthz')).body).to.deep.equal({ status: 'ok' });
    });
  });

  describe('observability', () => {
    it('logs one line per review without the object, and counts reviews', async () => {
      const h = harness(fakeLookup({ namespaces: { default: {} } }));
      const vc = sample('51-virtualcluster-full.yaml');
      metadata(vc).annotations = { secret: 'do-not-log-me' };
      await review(h, 'validate', admissionReview('CREATE', vc));
      metadata(vc).namespace = 'default';
      await review(h, 'validate', admissionReview('CREATE', vc));
      await request(h.app).post('/admission/mutate').send({ kind: 'Nope' });
      await h.logs.waitForLines(3);
      const entries = h.logs.entries();
      expect(entries.map((e) => [e.msg, e.webhook, e.result, e.level])).to.deep.equal([
        ['admission review', 'validate', 'allowed', 'info'],
        ['admission review', 'validate', 'denied', 'warn'],
        ['admission review', 'mutate', 'bad_request', 'warn'],
      ]);
      expect(entries[1]).to.include({
        kind: 'VirtualCluster',
        operation: 'CREATE',
        namespace: 'default',
        name: 'team-a',
        code: 422,
      });
      expect(h.logs.lines.join('\n')).not.to.include('do-not-log-me');
      const metrics = await h.registry.metrics();
      expect(metrics).to.include(
        'kubecell_admission_reviews_total{webhook="validate",kind="VirtualCluster",operation="CREATE",result="allowed"} 1',
      );
      expect(metrics).to.include(
        'kubecell_admission_reviews_total{webhook="validate",kind="VirtualCluster",operation="CREATE",result="denied"} 1',
      );
      expect(metrics).to.include(
        'kubecell_admission_reviews_total{webhook="mutate",kind="unknown",operation="unknown",result="bad_request"} 1',
      );
    });
  });
});
