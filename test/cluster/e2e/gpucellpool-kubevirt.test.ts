// GPUCellPool with KubeVirt through the real Metacontroller, on a control plane that serves only
// KubeVirt's kinds (the permissive stand-in VirtualMachine CRD; no Cluster API CRD), with only
// the kubecell-gpucellpool-kubevirt component installed. A platform engineer creates a pool and
// checks with kubectl what it did: the VirtualMachines and user-data Secrets, the cells' Nodes
// adopted (READY), a Node left by an earlier incarnation or registered twice reaped, and a cell
// retired by cordon and taint, with no pod ever evicted.
//
// The test plays only KubeVirt and the cells' kubelets (test/simulate/kubevirt.ts: VM status, the
// Node each booted cell registers from its user-data, systemUUID = the VM's firmware UUID), a
// kubelet that registers a stale Node, the tenant's pods, and the infrastructure losing a VM.
// Everything the pool does is Metacontroller calling KubeCell's hooks.
import { expect } from 'chai';
import {
  startSimulation,
  isPoolMachine,
  registerNode,
  type Simulation,
} from '../../simulate/index.js';
import { CLUSTER_SETUP_TIMEOUT_MS } from '../shared-cluster.js';
import {
  METACONTROLLER_USER,
  auditedPodRequests,
  cellsOf,
  conditionsLine,
  consumerPod,
  controllerRefOf,
  endPod,
  eventuallyColumns,
  isRetiring,
  poolColumns,
  poolNodeLabels,
  sampleIn,
  samplesIn,
  startAuditedStack,
  type AuditedStack,
  type CellStatus,
  type NodeObject,
} from './gpucellpool-support.js';
import {
  apply,
  conditionOf,
  eventually,
  eventuallyGone,
  getObject,
  hookCalls,
  kubectl,
  listObjects,
  uniqueName,
  type ObjectWithStatus,
} from './support.js';

const PROFILE = 'e2e-a100';

describe('e2e: GPUCellPool on KubeVirt through Metacontroller', function () {
  this.timeout(300_000);
  let audited: AuditedStack;
  let simulation: Simulation | undefined;
  /** VMs the simulated KubeVirt does not start until the test lets it. */
  const held = new Set<string>();
  const namespace = uniqueName('e2e-cells');
  const tenants = uniqueName('e2e-gpu-tenant');
  const poolName = uniqueName('kv');
  const cell = (ordinal: number) => `${poolName}-${ordinal}`;

  const stack = () => audited.stack;
  const pool = async (): Promise<ObjectWithStatus> => {
    const object = await getObject(stack(), 'gpucellpool', poolName);
    if (!object) throw new Error(`gpucellpool ${poolName} does not exist`);
    return object;
  };
  const poolObject = (replicas: number) => ({
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'GPUCellPool',
    // No kubecell.io/provisioner label: the admission webhook sets it from the type.
    metadata: { name: poolName },
    spec: {
      replicas,
      machineProfile: PROFILE,
      namespace,
      provisioner: {
        type: 'KubeVirt',
        kubeVirt: {
          cpu: 8,
          memory: '64Gi',
          image: { containerDisk: 'registry.example/kubecell/cell:1.0' },
        },
      },
      gpu: { resourceClaimTemplateName: 'a100-vfio' },
      bootstrap: { provider: 'Opaque', joinSecretRef: { name: 'cell-join' } },
    },
  });
  const node = (name: string) =>
    getObject(stack(), 'node', name) as Promise<NodeObject | undefined>;
  const vmNames = async () =>
    (await listObjects(stack(), 'virtualmachines.kubevirt.io', { namespace }))
      .map((vm) => vm.metadata.name)
      .sort();

  before(async function () {
    this.timeout(CLUSTER_SETUP_TIMEOUT_MS);
    audited = await startAuditedStack('kubevirt');
    simulation = await startSimulation(stack().cluster.kubeconfigPath, {
      ocm: false,
      providerBaseline: false,
      profileNodes: false,
      k3k: false,
      clusterAPI: false,
      kubevirt: {
        intervalMs: 300,
        filter: (vm) => isPoolMachine(vm) && !held.has(vm.metadata.name),
      },
    });
    await kubectl(stack(), ['create', 'namespace', namespace]);
    await kubectl(stack(), ['create', 'namespace', tenants]);
    await kubectl(stack(), ['label', 'namespace', tenants, 'kubecell.io/host-namespace=true']);
    // The join Secret of the samples, as a platform engineer would adapt it.
    await apply(stack(), samplesIn('30-cell-join-secret.yaml', namespace));
  });

  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async function () {
    this.timeout(120_000);
    await simulation?.stop();
    await audited?.stop(failed);
  });

  it('without its ResourceClaimTemplate the pool creates no VM and says so: DESIRED 2, CURRENT 0, READY 0', async function () {
    await apply(stack(), poolObject(2));
    const labelled = await pool();
    expect(labelled.metadata.labels?.['kubecell.io/provisioner'], 'set by the webhook').to.equal(
      'kubevirt',
    );
    const waiting = await eventually(stack(), 'Ready=False GPUClaimNotFound', async () => {
      const object = await pool();
      return conditionOf(object, 'Ready')?.reason === 'GPUClaimNotFound'
        ? { value: object }
        : { notYet: conditionsLine(object) };
    });
    expect(conditionOf(waiting, 'Ready')?.message).to.contain(
      `ResourceClaimTemplate ${namespace}/a100-vfio does not exist`,
    );
    expect(conditionOf(waiting, 'BootstrapValid')).to.include({
      status: 'True',
      reason: 'TemplateValid',
    });
    // CURRENT counts machines that exist: none does.
    expect(await poolColumns(stack(), poolName)).to.include({
      PROVISIONER: 'KubeVirt',
      DESIRED: '2',
      CURRENT: '0',
      READY: '0',
    });
    expect(await vmNames()).to.deep.equal([]);
  });

  it('with the claim template it creates a VM and a user-data Secret per replica; the cells join and their Nodes are adopted: READY 2', async function () {
    await apply(
      stack(),
      sampleIn('32-gpucellpool-gpu-claims.yaml', 'ResourceClaimTemplate', namespace),
    );
    await eventuallyColumns(stack(), poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
    const object = await pool();
    const uid = object.metadata.uid;
    expect(conditionOf(object, 'Ready')).to.include({ status: 'True', reason: 'AllCellsReady' });
    expect(await vmNames()).to.deep.equal([`${cell(0)}-0`, `${cell(1)}-0`]);
    const cells = cellsOf(object);
    expect(cells.map((c) => [c.name, c.vm, c.node, c.phase])).to.deep.equal([
      [cell(0), `${cell(0)}-0`, `${cell(0)}-0`, 'Ready'],
      [cell(1), `${cell(1)}-0`, `${cell(1)}-0`, 'Ready'],
    ]);
    for (const { vm: name, systemUUID } of cells) {
      const vm = await getObject(stack(), 'virtualmachines.kubevirt.io', name ?? '', namespace);
      expect(vm?.spec, `${name} firmware`).to.have.nested.property(
        'template.spec.domain.firmware.uuid',
        systemUUID,
      );
      expect(vm?.spec).to.have.deep.nested.property('template.spec.resourceClaims', [
        { name: 'gpu', resourceClaimTemplateName: 'a100-vfio' },
      ]);
      expect(controllerRefOf(vm)).to.include({ kind: 'GPUCellPool', name: poolName, uid });
      const secret = await getObject(stack(), 'secret', `${name ?? ''}-user-data`, namespace);
      const userData = Buffer.from(secret?.data?.['userdata'] ?? '', 'base64').toString('utf8');
      expect(userData).to.contain('token: "abcdef.0123456789abcdef"');
      expect(userData).to.contain(`name: ${name ?? ''}\n`);
      expect(userData).to.contain(
        `value: controller-uid=${uid},kubecell.io/machine-profile=${PROFILE},kubecell.io/pool=${poolName}\n`,
      );
      expect(userData, 'an escaped $${ stays literal').to.contain('bits=${subnet#*/}');

      // The Node the cell registered: the pool's labels, the VM's firmware UUID, adopted.
      const joined = await node(name ?? '');
      expect(joined?.metadata.labels).to.include(poolNodeLabels(object, PROFILE));
      expect(joined?.status?.['nodeInfo']).to.have.property('systemUUID', systemUUID);
      expect(controllerRefOf(joined)).to.include({ kind: 'GPUCellPool', name: poolName, uid });
      expect(isRetiring(joined)).to.equal(false);
    }
    // The simulated kubelets took the Nodes' names and labels from the rendered user-data.
    expect(
      [...(simulation?.kubevirt?.booted.values() ?? [])].map((booted) => booted.labelSource),
    ).to.deep.equal(['join-data', 'join-data']);
  });

  it('reaps the Node of an earlier incarnation when its VM is lost, and the cell joins again as a new incarnation', async function () {
    const before = cellsOf(await pool())[0];
    // The infrastructure loses the VM; its Node stays behind (the kubelet stops posting).
    await kubectl(stack(), ['delete', 'virtualmachine', `${cell(0)}-0`, '-n', namespace]);
    // Metacontroller deletes the children a sync leaves out before it writes that sync's status,
    // so the Node's absence is no sign that the status is written: wait for the cell itself.
    const after = await eventually<CellStatus>(stack(), `${cell(0)} Ready again`, async () => {
      const first = cellsOf(await pool())[0];
      return first?.vm === `${cell(0)}-1` &&
        first.node === `${cell(0)}-1` &&
        first.phase === 'Ready'
        ? { value: first }
        : { notYet: JSON.stringify(first ?? null) };
    });
    await eventuallyGone(stack(), 'node', `${cell(0)}-0`, undefined, 120_000);
    await eventuallyColumns(stack(), poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
    expect(after?.systemUUID, 'a new firmware UUID').to.not.equal(before?.systemUUID);
    expect(await vmNames()).to.deep.equal([`${cell(0)}-1`, `${cell(1)}-0`]);
    expect(await getObject(stack(), 'secret', `${cell(0)}-0-user-data`, namespace)).to.equal(
      undefined,
    );
    const joined = await node(`${cell(0)}-1`);
    expect(joined?.status?.['nodeInfo']).to.have.property('systemUUID', after?.systemUUID);
  });

  it('reaps a Node that registered with a cell’s systemUUID before the cell’s own Node', async function () {
    const vm = `${cell(2)}-0`;
    held.add(vm);
    await apply(stack(), poolObject(3));
    const pending = await eventually<CellStatus>(
      stack(),
      `cell ${cell(2)} with a firmware UUID`,
      async () => {
        const third = cellsOf(await pool()).find((c) => c.name === cell(2));
        const exists = (await vmNames()).includes(vm);
        return third?.systemUUID && exists
          ? { value: third }
          : { notYet: JSON.stringify(third ?? null) };
      },
    );
    // A kubelet registers a Node under another name with the pool's labels and the cell's
    // systemUUID before the cell's VM has booted (the same machine joined under a stale name).
    const earlier = `earlier-${cell(2)}`;
    const object = await pool();
    if (!simulation) throw new Error('no simulation');
    await registerNode(simulation.client, {
      name: earlier,
      labels: poolNodeLabels(object, PROFILE),
      systemUUID: pending.systemUUID?.toUpperCase(),
    });
    await eventually(stack(), `${earlier} taken for ${cell(2)}'s Node`, async () => {
      const third = cellsOf(await pool()).find((c) => c.name === cell(2));
      return third?.node === earlier ? { value: third } : { notYet: JSON.stringify(third ?? null) };
    });
    // The VM boots; its cell registers the Node named as its join data says.
    held.delete(vm);
    await eventually(stack(), `${cell(2)}'s own Node ${vm} current`, async () => {
      const third = cellsOf(await pool()).find((c) => c.name === cell(2));
      return third?.node === vm && third.phase === 'Ready'
        ? { value: third }
        : { notYet: JSON.stringify(third ?? null) };
    });
    await eventuallyGone(stack(), 'node', earlier, undefined, 120_000);
    await eventuallyColumns(stack(), poolName, { DESIRED: 3, CURRENT: 3, READY: 3 });
    expect(controllerRefOf(await node(vm))).to.include({ kind: 'GPUCellPool', name: poolName });
  });

  describe('scale-down retires a busy cell: cordoned and tainted, never evicted', function () {
    const pods: Record<string, string> = {};

    before(async function () {
      // A tenant pod holds the GPU of every cell, so the cell to retire is busy.
      for (const c of cellsOf(await pool())) {
        pods[c.name] = `train-${c.name}`;
        await apply(stack(), consumerPod(tenants, `train-${c.name}`, c.node ?? ''));
      }
      // A Ready cell's `since` (when its GPU was last seen idle) is absent while a consumer pod
      // holds the GPU: the pool has seen every pod.
      await eventually(stack(), 'every cell seen busy', async () => {
        const cells = cellsOf(await pool());
        return cells.length === 3 &&
          cells.every((c) => c.phase === 'Ready' && c.since === undefined)
          ? { value: cells }
          : { notYet: JSON.stringify(cells) };
      });
      await apply(stack(), poolObject(2));
    });

    it('the retiring cell’s Node is cordoned and tainted kubecell.io/retiring:NoSchedule; its VM and the pod stay', async function () {
      const retiring = await eventually(stack(), `${cell(2)} Retiring`, async () => {
        const object = await pool();
        const third = cellsOf(object).find((c) => c.name === cell(2));
        const current = await node(`${cell(2)}-0`);
        return third?.phase === 'Retiring' && isRetiring(current)
          ? { value: current }
          : {
              notYet: `${JSON.stringify(third ?? null)}; node spec ${JSON.stringify(current?.spec)}`,
            };
      });
      expect(retiring?.spec?.taints).to.deep.include({
        key: 'kubecell.io/retiring',
        effect: 'NoSchedule',
      });
      // A retiring cell is no longer counted Ready or desired, but its VM still exists.
      expect(await poolColumns(stack(), poolName)).to.include({
        DESIRED: '2',
        CURRENT: '3',
        READY: '2',
      });
      expect(await vmNames()).to.include(`${cell(2)}-0`);
      const pod = await getObject(stack(), 'pod', pods[cell(2)] ?? '', tenants);
      expect(pod?.metadata.deletionTimestamp, 'the pod is left alone').to.equal(undefined);
      for (const c of [cell(0), cell(1)]) {
        expect(
          isRetiring(await node(cellsOf(await pool()).find((x) => x.name === c)?.node ?? '')),
        ).to.equal(false);
      }
    });

    it('once its pod has ended, the cell’s VM and user-data Secret are deleted, then its Node: CURRENT 2', async function () {
      await endPod(stack(), tenants, pods[cell(2)] ?? '');
      await eventuallyGone(stack(), 'virtualmachine', `${cell(2)}-0`, namespace, 120_000);
      await eventuallyGone(stack(), 'secret', `${cell(2)}-0-user-data`, namespace);
      await eventuallyGone(stack(), 'node', `${cell(2)}-0`, undefined, 120_000);
      await eventually(stack(), `${cell(2)} gone from the status`, async () => {
        const names = cellsOf(await pool()).map((c) => c.name);
        return names.join() === [cell(0), cell(1)].join()
          ? { value: names }
          : { notYet: names.join() };
      });
      await eventuallyColumns(stack(), poolName, { DESIRED: 2, CURRENT: 2, READY: 2 });
      // The other tenants' pods were never touched.
      for (const c of [cell(0), cell(1)]) {
        const pod = await getObject(stack(), 'pod', pods[c] ?? '', tenants);
        expect(pod?.metadata.deletionTimestamp, `${pods[c] ?? ''}`).to.equal(undefined);
      }
    });

    it('nothing was evicted: the apiserver saw no eviction, and no pod deletion but the tenant’s', async function () {
      const { evictions, deletions } = auditedPodRequests(audited.auditLog);
      expect(evictions).to.deep.equal([]);
      expect(deletions.map((deletion) => deletion.pod)).to.deep.equal([
        `${tenants}/${pods[cell(2)] ?? ''}`,
      ]);
      expect(deletions.map((deletion) => deletion.user)).to.not.include(METACONTROLLER_USER);
      const canEvict = await stack().cluster.kubectl([
        'auth',
        'can-i',
        'create',
        'pods/eviction',
        `--as=${METACONTROLLER_USER}`,
        '-A',
      ]);
      expect(canEvict.stdout.trim(), 'Metacontroller may not evict').to.equal('no');
    });
  });

  describe('afterwards', function () {
    it('every GPUCellPool hook call was answered 200', async function () {
      const calls = await hookCalls(stack());
      const failed = [...calls.failed.entries()].filter(([key]) => key.startsWith('gpucellpool/'));
      expect(failed).to.deep.equal([]);
      expect(calls.ok.get('gpucellpool/sync') ?? 0).to.be.greaterThan(0);
    });
  });
});
