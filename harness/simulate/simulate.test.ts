// Unit tests of the simulation's pure parts (no cluster), and of one actor's choices against a
// stub client. The actors themselves are proven by the end-to-end tests that run them against a
// live control plane.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { readJoinSecret, renderUserData } from '../../hooks/gpucellpool/template.js';
import { k3kKubeconfigSecretName as kubecellK3kSecretName } from '../../hooks/virtualcluster/names.js';
import {
  kubeconfigServers,
  rewriteKubeconfigServer,
} from '../../hooks/virtualcluster/kubeconfig.js';
import { machineStatus } from './cluster-api.js';
import {
  bootIdentityFromKubeadmConfig,
  bootIdentityFromUserData,
  cellNodeRegistration,
  parseNodeLabels,
} from './gpu-cell.js';
import {
  k3kClusterStatus,
  k3kKubeconfigSecretName,
  k3kSafeConcatName,
  renderK3kKubeconfig,
  renderKubeconfigSecret,
} from './k3k.js';
import { resourcePath, type KubeClient, type KubeObject } from './kube-client.js';
import { loopbackAddressFor, nodeConditions, renderNode, renderNodeStatus } from './kubelet.js';
import { firmwareUuidOf, userDataSecretOf, virtualMachineStatus, vmResources } from './kubevirt.js';
import {
  HubLeaseController,
  LEASE_UPDATE_STOPPED,
  agentRestoresAvailable,
  hubLeaseAction,
  leaseExpired,
  leaseGraceSeconds,
  managedClusterConditions,
  renderHubLease,
  renderLease,
  type ManagedClusterObject,
} from './ocm.js';
import { permissiveK3kCrd } from './provider-baseline.js';
import { profileNodeName, profileNodeRegistrations } from './index.js';
import { formatMicroTime, formatTime, nameBasedUuid, setConditions } from './support.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const T0 = new Date('2026-01-01T00:00:00.000Z');
const T1 = new Date('2026-01-01T00:05:00.250Z');

describe('simulation: time formats and conditions', function () {
  it('writes MicroTime with six fractional digits and metav1.Time with none', function () {
    expect(formatMicroTime(T0)).to.equal('2026-01-01T00:00:00.000000Z');
    expect(formatMicroTime(T1)).to.equal('2026-01-01T00:05:00.250000Z');
    expect(formatTime(T1)).to.equal('2026-01-01T00:05:00Z');
  });

  it('keeps a lastTransitionTime while the status holds and moves it when the status changes', function () {
    const first = setConditions(
      undefined,
      [{ type: 'Ready', status: 'True', reason: 'A', message: '' }],
      T0,
    );
    const same = setConditions(
      first,
      [{ type: 'Ready', status: 'True', reason: 'B', message: 'x' }],
      T1,
    );
    expect(same[0]).to.include({ reason: 'B', lastTransitionTime: '2026-01-01T00:00:00Z' });
    const changed = setConditions(
      same,
      [{ type: 'Ready', status: 'False', reason: 'C', message: '' }],
      T1,
    );
    expect(changed[0]).to.include({ status: 'False', lastTransitionTime: '2026-01-01T00:05:00Z' });
  });

  it('derives stable UUID-shaped identifiers from names', function () {
    expect(nameBasedUuid('a')).to.equal(nameBasedUuid('a'));
    expect(nameBasedUuid('a')).to.not.equal(nameBasedUuid('b'));
    expect(nameBasedUuid('a')).to.match(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('builds REST paths for core, grouped, namespaced and cluster-scoped resources', function () {
    expect(resourcePath({ apiVersion: 'v1', resource: 'nodes', name: 'n1' })).to.equal(
      '/api/v1/nodes/n1',
    );
    expect(
      resourcePath({
        apiVersion: 'apps/v1',
        resource: 'deployments',
        namespace: 'k3k-system',
        name: 'k3k',
        subresource: 'status',
      }),
    ).to.equal('/apis/apps/v1/namespaces/k3k-system/deployments/k3k/status');
    expect(resourcePath({ apiVersion: 'k3k.io/v1beta1', resource: 'clusters' })).to.equal(
      '/apis/k3k.io/v1beta1/clusters',
    );
  });
});

describe('simulation: OCM', function () {
  it('reports an accepted, joined, available cluster with the conditions the Cell reads', function () {
    const conditions = managedClusterConditions({ accepted: true, joined: true, available: true });
    expect(conditions.map((c) => [c.type, c.status])).to.deep.equal([
      ['HubAcceptedManagedCluster', 'True'],
      ['ManagedClusterJoined', 'True'],
      ['ManagedClusterConditionAvailable', 'True'],
    ]);
    const denied = managedClusterConditions({ accepted: false, joined: true, available: true });
    expect(denied.map((c) => c.type)).to.deep.equal(['HubAcceptedManagedCluster']);
    // Not joined: the agent reports no Available; unhealthy: False. Unknown is the hub's verdict.
    const notJoined = managedClusterConditions({ accepted: true, joined: false, available: true });
    expect(notJoined.map((c) => c.type)).to.deep.equal([
      'HubAcceptedManagedCluster',
      'ManagedClusterJoined',
    ]);
    const unhealthy = managedClusterConditions({ accepted: true, joined: true, available: false });
    expect(unhealthy[2]).to.include({ status: 'False' });
  });

  it('renews managed-cluster-lease in the namespace named after the cluster', function () {
    expect(renderLease('cell1', T0, 30)).to.deep.equal({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'managed-cluster-lease', namespace: 'cell1' },
      spec: { leaseDurationSeconds: 30, renewTime: '2026-01-01T00:00:00.000000Z' },
    });
  });
});

describe("simulation: OCM's hub lease controller", function () {
  const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
  const cluster = (
    conditions: [string, string, string?][],
    leaseDurationSeconds?: number,
    extra: Partial<ManagedClusterObject['metadata']> = {},
  ): ManagedClusterObject => ({
    apiVersion: 'cluster.open-cluster-management.io/v1',
    kind: 'ManagedCluster',
    metadata: { name: 'cell1', resourceVersion: '7', ...extra },
    spec: { hubAcceptsClient: true, ...(leaseDurationSeconds ? { leaseDurationSeconds } : {}) },
    status: {
      conditions: conditions.map(([type, status, reason]) => ({
        type,
        status: status as 'True' | 'False' | 'Unknown',
        reason: reason ?? 'R',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      })),
    },
  });
  const accepted: [string, string][] = [
    ['HubAcceptedManagedCluster', 'True'],
    ['ManagedClusterJoined', 'True'],
  ];
  const available = cluster([...accepted, ['ManagedClusterConditionAvailable', 'True']], 2);
  const unknown = cluster(
    [
      ...accepted,
      ['ManagedClusterConditionAvailable', 'Unknown', 'ManagedClusterLeaseUpdateStopped'],
    ],
    2,
  );

  it('grants 5 lease durations, 5 × 60 s when the duration is unset or 0', function () {
    expect(leaseGraceSeconds(available)).to.equal(10);
    expect(leaseGraceSeconds(cluster(accepted))).to.equal(300);
    expect(leaseGraceSeconds(cluster(accepted, 0))).to.equal(300);
  });

  it('finds a lease expired at renewTime + grace exactly (!now.Before), and without renewTime', function () {
    expect(leaseExpired(T0, 10, at(9.999))).to.equal(false);
    expect(leaseExpired(T0, 10, at(10))).to.equal(true);
    expect(leaseExpired(undefined, 10, T0)).to.equal(true);
  });

  it('marks Available Unknown once the lease expired, only when it is not Unknown already', function () {
    const lease = renderLease('cell1', T0, 2);
    expect(hubLeaseAction(available, lease, at(9))).to.equal('none');
    expect(hubLeaseAction(available, lease, at(10))).to.equal('markUnknown');
    expect(hubLeaseAction(unknown, lease, at(60))).to.equal('none');
    // Available=False (the agent's own report) is still replaced by Unknown, as in OCM.
    const unhealthy = cluster([...accepted, ['ManagedClusterConditionAvailable', 'False']], 2);
    expect(hubLeaseAction(unhealthy, lease, at(10))).to.equal('markUnknown');
    expect(LEASE_UPDATE_STOPPED).to.deep.equal({
      type: 'ManagedClusterConditionAvailable',
      status: 'Unknown',
      reason: 'ManagedClusterLeaseUpdateStopped',
      message: 'Registration agent stopped updating its lease.',
    });
  });

  it('skips a cluster never accepted, and creates the lease of an accepted one that has none', function () {
    const never = cluster([], 2);
    expect(hubLeaseAction(never, undefined, T0)).to.equal('skip');
    expect(hubLeaseAction(never, renderLease('cell1', T0, 2), at(60))).to.equal('skip');
    expect(hubLeaseAction(available, undefined, T0)).to.equal('createLease');
    const deleting = cluster([...accepted, ['ManagedClusterConditionAvailable', 'True']], 2, {
      deletionTimestamp: '2026-01-01T00:00:00Z',
    });
    expect(hubLeaseAction(deleting, undefined, T0)).to.equal('markUnknown');
    expect(renderHubLease('cell1', T0)).to.deep.equal({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'managed-cluster-lease',
        namespace: 'cell1',
        labels: { 'open-cluster-management.io/cluster-name': 'cell1' },
      },
      spec: { holderIdentity: 'managed-cluster-lease', renewTime: '2026-01-01T00:00:00.000000Z' },
    });
  });

  it('does not judge the clusters it is told to ignore (its registration controller is down for them)', async function () {
    // Two accepted clusters whose 2-s leases were last renewed a minute ago, Available True.
    const stale = renderLease('unused', new Date(Date.now() - 60_000), 2);
    const clusters = ['cell1', 'cell2'].map((name) => ({
      ...available,
      metadata: { ...available.metadata, name },
    }));
    const patched: string[] = [];
    const client = {
      list: (path: string) =>
        Promise.resolve(
          path.endsWith('/managedclusters')
            ? clusters
            : clusters.map((c) => ({
                ...stale,
                metadata: { ...stale.metadata, namespace: c.metadata.name },
              })),
        ),
      patchStatus: (
        path: string,
        patch: { status: { conditions: { type: string; reason?: string }[] } },
      ) => {
        const reason = patch.status.conditions.find(
          (c) => c.type === 'ManagedClusterConditionAvailable',
        )?.reason;
        patched.push(`${path.split('/').pop() ?? ''} ${reason ?? ''}`);
        return Promise.resolve({} as KubeObject);
      },
    } as unknown as KubeClient;
    const hub = new HubLeaseController(client);

    hub.ignored.add('cell2');
    await hub.pollOnce();
    expect(patched).to.deep.equal(['cell1 ManagedClusterLeaseUpdateStopped']);
    expect([...hub.markedUnknown.keys()]).to.deep.equal(['cell1']);

    // The controller is back for cell2: its stale lease is judged on the next pass.
    hub.ignored.delete('cell2');
    patched.length = 0;
    await hub.pollOnce();
    expect(patched).to.deep.equal([
      'cell1 ManagedClusterLeaseUpdateStopped',
      'cell2 ManagedClusterLeaseUpdateStopped',
    ]);
  });

  it('the agent sets Available back after a fresh renewal, not after a back-dated one', function () {
    expect(agentRestoresAvailable(unknown, at(100), at(100))).to.equal(true);
    expect(agentRestoresAvailable(unknown, T0, at(100))).to.equal(false);
    expect(agentRestoresAvailable(available, at(100), at(100))).to.equal(false);
    const notJoined = cluster(
      [
        ['HubAcceptedManagedCluster', 'True'],
        ['ManagedClusterConditionAvailable', 'Unknown'],
      ],
      2,
    );
    expect(agentRestoresAvailable(notJoined, at(100), at(100))).to.equal(false);
  });
});

describe('simulation: kubelet', function () {
  it('renders a Ready Node with an InternalIP on loopback, nodeInfo and the given figures', function () {
    const registration = {
      name: 'n1',
      labels: { 'kubecell.io/machine-profile': 'a100' },
      annotations: { 'capacity.topolvm.io/00default': '1099511627776' },
      capacity: { cpu: '8', 'nvidia.com/gpu': '4' },
      systemUUID: 'ABC',
    };
    const node = renderNode(registration);
    expect(node.metadata.labels).to.include({
      'kubecell.io/machine-profile': 'a100',
      'kubernetes.io/hostname': 'n1',
    });
    expect(node.metadata.annotations).to.include({
      'capacity.topolvm.io/00default': '1099511627776',
    });
    const status = renderNodeStatus(registration, T0);
    expect(status.capacity).to.deep.equal({ cpu: '8', 'nvidia.com/gpu': '4' });
    expect(status.allocatable).to.deep.equal(status.capacity);
    expect(status.nodeInfo.systemUUID).to.equal('ABC');
    expect(status.addresses[0]).to.deep.equal({
      type: 'InternalIP',
      address: loopbackAddressFor('n1'),
    });
    expect(loopbackAddressFor('n1')).to.match(/^127\.0\.0\.\d+$/);
    expect(status.conditions.find((c) => c.type === 'Ready')).to.include({
      status: 'True',
      reason: 'KubeletReady',
      lastHeartbeatTime: '2026-01-01T00:00:00Z',
    });
  });

  it('moves every heartbeat and only a changed Ready transition', function () {
    const first = nodeConditions(true, T0);
    const beat = nodeConditions(true, T1, first);
    const ready = beat.find((c) => c.type === 'Ready');
    expect(ready).to.include({
      lastHeartbeatTime: '2026-01-01T00:05:00Z',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    const down = nodeConditions(false, T1, first).find((c) => c.type === 'Ready');
    expect(down).to.include({ status: 'False', lastTransitionTime: '2026-01-01T00:05:00Z' });
  });

  it('gives each profile N Nodes with its devices and TopoLVM capacity', function () {
    const nodes = profileNodeRegistrations('A100_80G', ['nvidia.com/gpu'], { perProfile: 3 });
    expect(nodes.map((n) => n.name)).to.deep.equal([
      'sim-a100-80g-0',
      'sim-a100-80g-1',
      'sim-a100-80g-2',
    ]);
    expect(nodes[0]?.labels).to.deep.equal({ 'kubecell.io/machine-profile': 'A100_80G' });
    expect(nodes[0]?.capacity).to.include({ 'nvidia.com/gpu': '8', cpu: '32' });
    expect(nodes[0]?.annotations).to.deep.equal({
      'capacity.topolvm.io/00default': String(1024 ** 4),
    });
    expect(profileNodeName('---', 0)).to.equal('sim-profile-0');
  });
});

describe('simulation: provider baseline', function () {
  it('has a permissive stand-in for each k3k CRD the Cell requires, and none for others', function () {
    const policy = permissiveK3kCrd('virtualclusterpolicies.k3k.io');
    expect(policy?.spec).to.deep.include({ group: 'k3k.io', scope: 'Cluster' });
    expect(policy?.metadata.labels).to.deep.equal({ 'kubecell.io/test-stand-in': 'permissive' });
    expect(permissiveK3kCrd('clusters.k3k.io')?.spec).to.deep.include({ scope: 'Namespaced' });
    expect(permissiveK3kCrd('widgets.example.com')).to.equal(undefined);
  });
});

describe('simulation: k3k', function () {
  it('names the kubeconfig Secret as k3k does, and as KubeCell expects it', function () {
    for (const name of ['team-a', 'a'.repeat(50), `${'b'.repeat(52)}-x-yy`, 'c'.repeat(63)]) {
      expect(k3kKubeconfigSecretName(name), name).to.equal(kubecellK3kSecretName(name));
      expect(k3kKubeconfigSecretName(name).length).to.be.lessThan(64);
    }
    expect(k3kSafeConcatName('k3k', '', 'x')).to.equal('k3k-x');
  });

  it('writes a kubeconfig KubeCell can read and rewrite, with fake, labelled certificates', function () {
    const text = renderK3kKubeconfig('https://k3k-vc-service.tenant-a.svc:443');
    const parsed = parse(text) as { users: { user: Record<string, string> }[] };
    const certificate = Buffer.from(
      parsed.users[0]?.user['client-certificate-data'] ?? '',
      'base64',
    ).toString();
    expect(certificate).to.match(/^-----BEGIN CERTIFICATE-----\n/);
    expect(Buffer.from(certificate.split('\n')[1] ?? '', 'base64').toString()).to.contain(
      'SIMULATED',
    );
    expect(kubeconfigServers(text)).to.deep.equal(['https://k3k-vc-service.tenant-a.svc:443']);
    const rewritten = rewriteKubeconfigServer(text, 'https://127.0.0.5:30001');
    expect(rewritten.ok).to.equal(true);
  });

  it('owns the Secret by the Cluster and reports Ready as k3k does', function () {
    const cluster = {
      apiVersion: 'k3k.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: 'vc', namespace: 'tenant-a', uid: 'u1', generation: 2 },
      spec: { tlsSANs: ['127.0.0.5'] },
    };
    const secret = renderKubeconfigSecret(cluster);
    expect(secret.metadata).to.deep.include({ name: 'k3k-vc-kubeconfig', namespace: 'tenant-a' });
    expect(secret.metadata.ownerReferences?.[0]).to.include({
      kind: 'Cluster',
      uid: 'u1',
      controller: true,
    });
    const status = k3kClusterStatus(cluster, 'Ready', T0) as {
      phase: string;
      conditions: unknown[];
      tlsSANs: string[];
    };
    expect(status.phase).to.equal('Ready');
    expect(status.tlsSANs).to.deep.equal(['127.0.0.5']);
    expect(status.conditions[0]).to.include({
      type: 'Ready',
      status: 'True',
      reason: 'Provisioned',
      observedGeneration: 2,
    });
  });
});

describe('simulation: GPU cells', function () {
  const sampleSecret = parse(
    readFileSync(path.join(repoRoot, 'samples', '30-cell-join-secret.yaml'), 'utf8'),
  ) as { stringData: Record<string, string> };
  const data = Object.fromEntries(
    Object.entries(sampleSecret.stringData).map(([key, value]) => [
      key,
      Buffer.from(value, 'utf8').toString('base64'),
    ]),
  );

  it('reads the Node name and labels from the user-data KubeCell renders from the sample join Secret', function () {
    const read = readJoinSecret(data);
    if (!read.ok) throw new Error(JSON.stringify(read.problem));
    const userData = renderUserData(read.join, {
      cellName: 'a100-0',
      nodeName: 'a100-0-0',
      poolName: 'a100',
      poolUid: 'pool-uid',
      machineProfile: 'a100',
    });
    expect(bootIdentityFromUserData(userData)).to.deep.equal({
      nodeName: 'a100-0-0',
      labels: {
        'controller-uid': 'pool-uid',
        'kubecell.io/machine-profile': 'a100',
        'kubecell.io/pool': 'a100',
      },
    });
  });

  it('falls back to kubelet flags in a script, and reads a KubeadmConfig', function () {
    expect(
      bootIdentityFromUserData('#!/bin/sh\nkubeadm join --node-name=x1 --node-labels "a=b,c=d"\n'),
    ).to.deep.equal({ nodeName: 'x1', labels: { a: 'b', c: 'd' } });
    expect(parseNodeLabels('a=1, b=2,junk,=x')).to.deep.equal({ a: '1', b: '2' });
    expect(
      bootIdentityFromKubeadmConfig({
        apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2',
        kind: 'KubeadmConfig',
        metadata: { name: 'm' },
        spec: {
          joinConfiguration: {
            nodeRegistration: { kubeletExtraArgs: [{ name: 'node-labels', value: 'k=v' }] },
          },
        },
      }),
    ).to.deep.equal({ labels: { k: 'v' } });
  });

  it("registers the cell's Node under its join data, else with the pool's labels", function () {
    const pool = {
      'controller-uid': 'u',
      'kubecell.io/pool': 'p',
      'kubecell.io/machine-profile': 'a100',
    };
    const fromJoin = cellNodeRegistration({
      machineName: 'p-0-0',
      boot: { nodeName: 'p-0-0', labels: { a: 'b' } },
      poolLabels: pool,
      systemUUID: 'UUID',
      cpu: '8',
      memory: '64Gi',
    });
    expect(fromJoin.labelSource).to.equal('join-data');
    expect(fromJoin.registration).to.deep.include({
      name: 'p-0-0',
      labels: { a: 'b' },
      systemUUID: 'UUID',
    });
    expect(fromJoin.registration.capacity).to.include({
      cpu: '8',
      memory: '64Gi',
      'nvidia.com/gpu': '10',
    });
    const fallback = cellNodeRegistration({
      machineName: 'p-0-0',
      boot: {},
      poolLabels: pool,
      systemUUID: 'UUID',
      options: { gpuResource: 'huawei.com/Ascend910B3', gpuCount: 1 },
    });
    expect(fallback.labelSource).to.equal('pool');
    expect(fallback.registration.labels).to.deep.equal(pool);
    expect(fallback.registration.capacity).to.include({ 'huawei.com/Ascend910B3': '1' });
    const none = cellNodeRegistration({
      machineName: 'p-0-0',
      boot: {},
      poolLabels: pool,
      systemUUID: 'UUID',
      options: { labelFallback: 'none' },
    });
    expect(none.labelSource).to.equal('none');
  });

  it("reads a VM's firmware UUID, user-data Secret and size, and reports it Running", function () {
    const vm = {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'p-0-0', namespace: 'cells', generation: 1 },
      spec: {
        template: {
          spec: {
            domain: { cpu: { cores: 8 }, memory: { guest: '64Gi' }, firmware: { uuid: 'f-uuid' } },
            volumes: [
              { name: 'rootdisk' },
              {
                name: 'cloudinitdisk',
                cloudInitNoCloud: { secretRef: { name: 'p-0-0-user-data' } },
              },
            ],
          },
        },
      },
    };
    expect(firmwareUuidOf(vm)).to.equal('f-uuid');
    expect(userDataSecretOf(vm)).to.equal('p-0-0-user-data');
    expect(vmResources(vm)).to.deep.equal({ cpu: '8', memory: '64Gi' });
    expect(virtualMachineStatus(vm, true, T0)).to.deep.include({
      created: true,
      ready: true,
      printableStatus: 'Running',
    });
  });

  it("writes a Machine's status with nodeRef, addresses and nodeInfo once its Node joined", function () {
    const machine = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'm', namespace: 'cells', generation: 1 },
    };
    const pending = machineStatus(machine, undefined, T0);
    expect(pending).to.include({ phase: 'Provisioning' });
    expect(pending).to.not.have.property('nodeRef');
    const running = machineStatus(
      machine,
      { name: 'm', address: '127.0.0.9', nodeInfo: { systemUUID: 'x' } },
      T0,
    );
    expect(running).to.deep.include({
      phase: 'Running',
      nodeRef: { name: 'm' },
      initialization: { bootstrapDataSecretCreated: true, infrastructureProvisioned: true },
    });
    const conditions = running.conditions as { type: string; status: string; reason: string }[];
    expect(conditions.find((c) => c.type === 'Ready')).to.include({
      status: 'True',
      reason: 'Ready',
    });
  });
});
