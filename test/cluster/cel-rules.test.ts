// The CEL rules the schemas carry, enforced by the real apiserver: for each rule, one object the
// apiserver rejects with the rule's message. The same rules are evaluated offline by the webhook
// (schemas/schemas.test.ts covers accepted and rejected cases there).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { ControlPlane } from '../../harness/cluster/control-plane.js';
import { installKubeCellApi, kubectlOk } from '../../harness/cluster/kubecell.js';
import { repoRoot } from '../../harness/cluster/paths.js';
import { CLUSTER_SETUP_TIMEOUT_MS, getCluster } from './shared-cluster.js';

type Json = Record<string, unknown>;
const sample = (file: string): Json =>
  parse(readFileSync(path.join(repoRoot, 'samples', file), 'utf8')) as Json;
const spec = (object: Json): Json => object['spec'] as Json;
const named = (object: Json, name: string): Json => ({
  ...object,
  metadata: { ...(object['metadata'] as Json), name },
});

interface Case {
  rule: string;
  object: () => Json;
  message: string;
}

const poolCases: Case[] = [
  {
    rule: 'spec.gpu: exactly one of resourceClaimName and resourceClaimTemplateName',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-both-claims');
      (spec(pool)['gpu'] as Json)['resourceClaimName'] = 'a100-0';
      return pool;
    },
    message: 'spec.gpu must set exactly one of resourceClaimName',
  },
  {
    rule: 'a named claim allows at most one replica',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-named-replicas');
      spec(pool)['gpu'] = { resourceClaimName: 'a100-0' };
      delete spec(pool)['autoscaling'];
      spec(pool)['replicas'] = 2;
      return pool;
    },
    message: 'spec.replicas must be 0 or 1 when spec.gpu.resourceClaimName is set',
  },
  {
    rule: 'a named claim allows autoscaling.maxReplicas of at most 1',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-named-max');
      spec(pool)['gpu'] = { resourceClaimName: 'a100-0' };
      spec(pool)['replicas'] = 1;
      spec(pool)['autoscaling'] = { minReplicas: 0, maxReplicas: 2 };
      return pool;
    },
    message: 'spec.autoscaling.maxReplicas must be at most 1',
  },
  {
    rule: 'autoscaling.minReplicas <= maxReplicas',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-min-max');
      spec(pool)['autoscaling'] = { minReplicas: 5, maxReplicas: 4 };
      return pool;
    },
    message: 'minReplicas must be less than or equal to spec.autoscaling.maxReplicas',
  },
  {
    rule: 'Opaque bootstrap needs joinSecretRef',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-opaque-secret');
      spec(pool)['bootstrap'] = { provider: 'Opaque' };
      return pool;
    },
    message: 'spec.bootstrap.joinSecretRef is required when spec.bootstrap.provider is Opaque',
  },
  {
    rule: 'bootstrap.provider is Opaque or ClusterAPI',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-provider-enum');
      spec(pool)['bootstrap'] = { provider: 'Cloudinit', joinSecretRef: { name: 'cell-join' } };
      return pool;
    },
    message: 'Unsupported value: "Cloudinit"',
  },
  {
    rule: 'provisioner config matches its type',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-provisioner-type');
      (spec(pool)['provisioner'] as Json)['type'] = 'ClusterAPI';
      return pool;
    },
    message:
      'spec.provisioner.kubeVirt is required when spec.provisioner.type is KubeVirt, and must be omitted otherwise',
  },
  {
    rule: 'a ClusterAPI pool has exactly one source of join data',
    object: () => {
      const pool = named(sample('36-gpucellpool-clusterapi.yaml'), 'cel-capi-join');
      spec(pool)['bootstrap'] = { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } };
      return pool;
    },
    message: 'set exactly one source of join data',
  },
  {
    rule: 'a DNS-label name of at most 40 characters',
    object: () => named(sample('35-gpucellpool-full.yaml'), 'p'.repeat(41)),
    message: 'metadata.name of a GPUCellPool must be a DNS label of at most 40 characters',
  },
  {
    rule: 'the network name default is reserved',
    object: () => {
      const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-default-network');
      const kubeVirt = (spec(pool)['provisioner'] as Json)['kubeVirt'] as Json;
      kubeVirt['networks'] = [
        { name: 'default', networkAttachmentDefinition: 'kubecell-cells/storage-net' },
      ];
      return pool;
    },
    message: 'the name default is reserved for the pod network',
  },
];

describe('CEL rules enforced by the real apiserver', function () {
  let cluster: ControlPlane;

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    cluster = await getCluster();
    await installKubeCellApi(cluster);
  });

  const rejects = async (object: Json, message: string) => {
    const result = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: stringify(object),
    });
    expect(result.code, `expected a rejection, got: ${result.stdout}`).to.not.equal(0);
    expect(result.stderr).to.contain(message);
  };

  for (const { rule, object, message } of poolCases) {
    it(`GPUCellPool: ${rule}`, async function () {
      this.timeout(30_000);
      await rejects(object(), message);
    });
  }

  it('VirtualNodeClass: entitlement keys must be ResourceQuota names', async function () {
    this.timeout(30_000);
    const vnclass = named(sample('21-virtualnodeclass-full.yaml'), 'cel-bad-key');
    ((spec(vnclass)['entitlement'] as Json)['workloadHard'] as Json)['nvidia.com/gpu'] = '1';
    await rejects(vnclass, 'entitlement.workloadHard keys must be ResourceQuota resource names');
  });

  it('Cell: a device resourceName is declared once', async function () {
    this.timeout(30_000);
    const cell = named(sample('11-cell-full.yaml'), 'cel-duplicate-device');
    const profile = spec(cell)['machineProfile'] as Json;
    profile['devices'] = [
      { name: 'gpu', resourceName: 'nvidia.com/gpu' },
      { name: 'gpu2', resourceName: 'nvidia.com/gpu' },
    ];
    await rejects(cell, 'each resourceName may be declared by only one device');
  });

  it('VirtualCluster: cellRef and classRef are immutable after creation', async function () {
    this.timeout(30_000);
    const vc = named(sample('51-virtualcluster-full.yaml'), 'cel-immutable');
    (vc['metadata'] as Json)['namespace'] = 'tenant-a';
    await kubectlOk(cluster, ['create', '-f', '-'], stringify(vc));
    try {
      const moved = structuredClone(vc);
      (spec(moved)['cellRef'] as Json)['name'] = 'elsewhere';
      await rejects(moved, 'spec.cellRef is immutable');
      const reclassed = structuredClone(vc);
      (spec(reclassed)['classRef'] as Json)['name'] = 'other';
      await rejects(reclassed, 'spec.classRef is immutable');
    } finally {
      await kubectlOk(cluster, [
        'delete',
        'virtualcluster',
        '-n',
        'tenant-a',
        'cel-immutable',
        '--wait=false',
      ]);
    }
  });

  it('VirtualCluster: a name of at most 63 characters', async function () {
    this.timeout(30_000);
    const vc = named(sample('51-virtualcluster-full.yaml'), 'v'.repeat(64));
    await rejects(vc, 'metadata.name of a VirtualCluster must be at most 63 characters');
  });

  it('GPUCellPool: spec.namespace is immutable', async function () {
    this.timeout(30_000);
    const pool = named(sample('35-gpucellpool-full.yaml'), 'cel-immutable-namespace');
    await kubectlOk(cluster, ['create', '-f', '-'], stringify(pool));
    try {
      const moved = structuredClone(pool);
      spec(moved)['namespace'] = 'elsewhere';
      await rejects(moved, 'spec.namespace is immutable');
    } finally {
      await kubectlOk(cluster, [
        'delete',
        'gpucellpool',
        'cel-immutable-namespace',
        '--wait=false',
      ]);
    }
  });

  it('VirtualCluster: status.resolved cannot change once written', async function () {
    this.timeout(30_000);
    const vc = named(sample('50-virtualcluster-minimal.yaml'), 'cel-resolved');
    (vc['metadata'] as Json)['namespace'] = 'tenant-b';
    await kubectlOk(cluster, ['create', '-f', '-'], stringify(vc));
    const resolved = {
      cell: {
        name: 'cell1',
        uid: 'u1',
        managedClusterName: 'cell1',
        machineProfile: { name: 'a100' },
      },
      class: {
        name: 'small',
        uid: 'u2',
        storageClassName: 'topolvm-provisioner',
        entitlement: { workloadHard: { 'requests.cpu': '4' } },
      },
      hostNamespace: 'tenant-b',
      endpointAddress: '10.0.12.7',
      resolvedAt: '2026-11-30T00:00:00Z',
    };
    const patchStatus = (status: Json) =>
      cluster.kubectl([
        'patch',
        'virtualcluster',
        '-n',
        'tenant-b',
        'cel-resolved',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
    try {
      const first = await patchStatus({ resolved });
      expect(first.code, first.stderr).to.equal(0);
      const changed = await patchStatus({
        resolved: { ...resolved, endpointAddress: '10.0.12.8' },
      });
      expect(changed.code).to.not.equal(0);
      expect(changed.stderr).to.contain('status.resolved is an immutable snapshot');
      // A status written over it without the snapshot (a stale copy's) is refused too.
      const erased = await cluster.kubectl([
        'patch',
        'virtualcluster',
        '-n',
        'tenant-b',
        'cel-resolved',
        '--subresource=status',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'remove', path: '/status/resolved' }]),
      ]);
      expect(erased.code).to.not.equal(0);
      expect(erased.stderr).to.contain('status.resolved, once written, cannot be removed');
    } finally {
      await kubectlOk(cluster, [
        'delete',
        'virtualcluster',
        '-n',
        'tenant-b',
        'cel-resolved',
        '--wait=false',
      ]);
    }
  });

  it('VirtualClusterPlan: a concluded decision cannot be overwritten within its generation', async function () {
    this.timeout(90_000);
    // A host namespace that already hosts a VirtualCluster (of a class that does not exist, so
    // it never resolves): a plan there concludes Rejected (NamespaceOccupied). An Unknown plan
    // may be evaluated again (decision D40), so the rule is tried on a conclusion.
    const namespace = 'cel-plan-occupied';
    await kubectlOk(cluster, ['create', 'namespace', namespace]);
    await kubectlOk(cluster, ['label', 'namespace', namespace, 'kubecell.io/host-namespace=true']);
    const incumbent = named(sample('50-virtualcluster-minimal.yaml'), 'cel-incumbent');
    (incumbent['metadata'] as Json)['namespace'] = namespace;
    (spec(incumbent)['classRef'] as Json)['name'] = 'cel-no-such-class';
    await kubectlOk(cluster, ['create', '-f', '-'], stringify(incumbent));
    const plan = named(sample('40-virtualclusterplan-minimal.yaml'), 'cel-once-per-generation');
    (plan['metadata'] as Json)['namespace'] = namespace;
    await kubectlOk(cluster, ['create', '-f', '-'], stringify(plan));
    const get = ['get', 'vcp', '-n', namespace, 'cel-once-per-generation', '-o', 'json'];
    try {
      // The plan controller (Metacontroller calling the plan hook) concludes it once.
      let decision: unknown;
      for (let attempt = 0; attempt < 120 && decision !== 'Rejected'; attempt++) {
        const status = (JSON.parse(await kubectlOk(cluster, get)) as Json)['status'] as
          Json | undefined;
        decision = status?.['decision'];
        if (decision !== 'Rejected') await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(decision, 'status.decision written by the plan controller').to.equal('Rejected');
      const overwrite = await cluster.kubectl([
        'patch',
        'vcp',
        '-n',
        namespace,
        'cel-once-per-generation',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { evaluatedAt: '2099-01-01T00:00:00Z' } }),
      ]);
      expect(overwrite.code).to.not.equal(0);
      expect(overwrite.stderr).to.contain('a plan is evaluated once per generation');
    } finally {
      await kubectlOk(cluster, ['delete', 'namespace', namespace, '--wait=false']);
    }
  });
});
