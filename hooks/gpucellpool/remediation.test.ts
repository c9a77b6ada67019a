// Cell health through the sync (remediation.ts wired in sync.ts): detection within the check's
// duration and one resync, replacement without eviction, the maxUnhealthy short-circuit, the
// release timeout, and a status that is the same bytes for the same request and clock.
import { expect } from 'chai';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import type { NodeObject } from './objects.js';
import { syncGPUCellPool } from './sync.js';
import {
  CONFIG,
  NOW,
  World,
  at,
  capiTemplates,
  claimTemplate,
  clusterApiPool,
  consumerNamespace,
  gpuPod,
  joinSecret,
  joinedPool,
  kubeVirtPool,
  cellOf as cell,
  withAutoscaling,
} from './testing.js';

const related = () => [joinSecret(), claimTemplate(), consumerNamespace()];
const iso = (time: Date) => `${time.toISOString().slice(0, 19)}Z`;

function nodeChild(world: World, name: string): KubernetesObject | undefined {
  return world.last?.children.find((c) => c.kind === 'Node' && c.metadata.name === name);
}

describe('GPUCellPool cell health through the sync', () => {
  it('reports every joined cell Healthy, and CellsHealthy and RemediationAllowed True', () => {
    const world = joinedPool();
    expect(cell(world, 'a100-0')).to.include({
      health: 'Healthy',
      healthReason: 'NodeHealthy',
      healthSince: iso(at(10)),
    });
    expect(world.condition('CellsHealthy')).to.include({
      status: 'True',
      reason: 'AllCellsHealthy',
      message: '2 of 2 cells healthy',
    });
    expect(world.condition('RemediationAllowed')).to.include({
      status: 'True',
      reason: 'RemediationAllowed',
    });
    expect(world.last?.resyncAfterSeconds).to.equal(undefined);
  });

  it('finds a NotReady Node at 300 s (one resync asked for), retires it and replaces it at once', () => {
    const world = joinedPool();
    world.setNodeCondition('a100-1-0', 'Ready', 'False', at(100));
    world.sync(at(120));
    expect(cell(world, 'a100-1')).to.include({ phase: 'NotReady', health: 'Healthy' });
    expect(world.last?.resyncAfterSeconds).to.equal(280);

    world.sync(at(400));
    expect(cell(world, 'a100-1')).to.include({
      phase: 'Retiring',
      health: 'Remediating',
      healthReason: 'UnhealthyNode',
      healthSince: iso(at(400)),
    });
    // Retired like a scale-down cell: cordoned and tainted, its VM kept for now.
    const retiring = nodeChild(world, 'a100-1-0') as NodeObject;
    expect(retiring.spec).to.deep.equal({
      unschedulable: true,
      taints: [{ key: 'kubecell.io/retiring', effect: 'NoSchedule' }],
    });
    // The replacement, at the lowest free ordinal, in the same sync.
    expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-1-0', 'a100-2-0']);
    expect(world.status).to.include({ desiredReplicas: 2 });
    expect(world.condition('CellsHealthy')).to.include({
      status: 'False',
      reason: 'CellsUnhealthy',
    });
    expect(world.condition('CellsHealthy')?.message).to.equal(
      `2 of 3 cells healthy: a100-1 Remediating (UnhealthyNode): retired and replaced since ` +
        `${iso(at(400))}, its machine goes once no consumer pod holds its GPU`,
    );

    // Seen cordoned, no pod holds the GPU: the VM goes, then the Node, then the cell.
    world.sync(at(405));
    expect(cell(world, 'a100-1')).to.include({ phase: 'Deleting', health: 'Remediating' });
    expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-2-0']);
    world.sync(at(410));
    expect(world.names('Node')).to.deep.equal(['a100-0-0']);
    world.sync(at(415));
    expect(world.status.cells?.map((c) => c.name)).to.deep.equal(['a100-0', 'a100-2']);
  });

  it('waits for the GPU while a pod holds it, and no longer than releaseTimeoutSeconds', () => {
    const pool = kubeVirtPool({ health: { releaseTimeoutSeconds: 900 } });
    const world = joinedPool(pool);
    world.pods.push(gpuPod('train', { nodeName: 'a100-1-0' }));
    world.setNodeCondition('a100-1-0', 'GpuMemWatch', 'True', at(50));
    world.sync(at(60));
    expect(cell(world, 'a100-1')).to.include({
      health: 'Remediating',
      healthReason: 'UnhealthyNode',
    });
    world.sync(at(70));
    expect(cell(world, 'a100-1')).to.include({ phase: 'Retiring' });
    expect(world.names('VirtualMachine')).to.include('a100-1-0');
    expect(world.last?.resyncAfterSeconds).to.equal(890);
    world.sync(at(959));
    expect(world.names('VirtualMachine')).to.include('a100-1-0');
    world.sync(at(960));
    expect(cell(world, 'a100-1')).to.include({ phase: 'Deleting' });
    expect(world.names('VirtualMachine')).to.not.include('a100-1-0');
  });

  it('without releaseTimeoutSeconds, waits for the pod however long it runs', () => {
    const world = joinedPool();
    world.pods.push(gpuPod('train', { nodeName: 'a100-0-0' }));
    world.setNodeCondition('a100-0-0', 'SysLogsXIDError', 'True', at(20));
    world.sync(at(30));
    world.sync(at(86400));
    expect(cell(world, 'a100-0')).to.include({ phase: 'Retiring', health: 'Remediating' });
    expect(world.names('VirtualMachine')).to.include('a100-0-0');
    world.pods = [];
    world.sync(at(86401));
    expect(world.names('VirtualMachine')).to.not.include('a100-0-0');
  });

  it('replaces at once a cell whose VM runs and never joins (the boot hang)', () => {
    const world = new World(kubeVirtPool({ replicas: 1 }), related());
    world.sync(NOW);
    world.setMachineStatus('a100-0-0', {
      printableStatus: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(at(30)) }],
    });
    world.sync(at(40));
    expect(cell(world, 'a100-0')).to.include({ health: 'Healthy', healthReason: 'Starting' });
    expect(world.last?.resyncAfterSeconds).to.equal(590);
    world.sync(at(630));
    // No Node to cordon, no pod: the VM goes in the same sync as its replacement comes.
    expect(cell(world, 'a100-0')).to.include({
      phase: 'Deleting',
      health: 'Remediating',
      healthReason: 'NodeStartupTimeout',
    });
    expect(world.names('VirtualMachine')).to.deep.equal(['a100-1-0']);
    expect(cell(world, 'a100-1')).to.include({ phase: 'Provisioning', healthReason: 'Starting' });
  });

  it('never times out a VM that does not run (waiting for a GPU)', () => {
    const world = new World(kubeVirtPool({ replicas: 1 }), related());
    world.sync(NOW);
    world.setMachineStatus('a100-0-0', { printableStatus: 'ErrorUnschedulable' });
    world.sync(at(99999));
    expect(cell(world, 'a100-0')).to.include({ health: 'Healthy', phase: 'Provisioning' });
    expect(world.last?.resyncAfterSeconds).to.equal(undefined);
  });

  it('remediates nothing when more cells are unhealthy than maxUnhealthy allows', () => {
    const world = joinedPool();
    world.setNodeCondition('a100-0-0', 'Ready', 'Unknown', at(20));
    world.setNodeCondition('a100-1-0', 'Ready', 'Unknown', at(20));
    world.sync(at(400));
    expect(world.status.cells?.map((c) => [c.phase, c.health])).to.deep.equal([
      ['NotReady', 'Unhealthy'],
      ['NotReady', 'Unhealthy'],
    ]);
    expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-1-0']);
    expect(world.condition('RemediationAllowed')).to.include({
      status: 'False',
      reason: 'TooManyUnhealthy',
    });
    // One recovers: the other is within maxUnhealthy again and is replaced.
    world.setNodeCondition('a100-0-0', 'Ready', 'True', at(410));
    world.sync(at(420));
    expect(cell(world, 'a100-0')).to.include({ health: 'Healthy', healthSince: iso(at(420)) });
    expect(cell(world, 'a100-1')).to.include({ health: 'Remediating' });
    expect(world.condition('RemediationAllowed')).to.include({ status: 'True' });
  });

  it('only reports with remediation None', () => {
    const world = joinedPool(kubeVirtPool({ health: { remediation: 'None' } }));
    world.setNodeCondition('a100-1-0', 'Ready', 'False', at(20));
    world.sync(at(400));
    expect(cell(world, 'a100-1')).to.include({
      phase: 'NotReady',
      health: 'Unhealthy',
      healthReason: 'UnhealthyNode',
      healthSince: iso(at(320)),
    });
    expect(world.names('VirtualMachine')).to.have.length(2);
    expect(world.condition('RemediationAllowed')).to.include({
      status: 'False',
      reason: 'RemediationDisabled',
    });
  });

  it('replaces within autoscaling.maxReplicas: the retired cell no longer counts', () => {
    const pool = withAutoscaling(kubeVirtPool(), { minReplicas: 2, maxReplicas: 2 });
    const world = joinedPool(pool);
    world.setNodeCondition('a100-0-0', 'Ready', 'False', at(20));
    world.sync(at(320));
    expect(world.status).to.include({ desiredReplicas: 2 });
    expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-1-0', 'a100-2-0']);
  });

  it('Cluster API: a failed Machine is MachineFailed and replaced', () => {
    const world = new World(clusterApiPool(), [...capiTemplates(), consumerNamespace()]);
    world.sync(NOW);
    world.sync(at(5));
    world.setMachineStatus('a100-capi-0-0', { phase: 'Failed' });
    world.sync(at(10));
    expect(cell(world, 'a100-capi-0')).to.include({
      health: 'Remediating',
      healthReason: 'MachineFailed',
      phase: 'Deleting',
    });
    expect(world.names('Machine')).to.deep.equal(['a100-capi-1-0']);
  });

  it('reports a cell whose Node was deleted as NodeDeleted', () => {
    const world = joinedPool(kubeVirtPool({ health: { remediation: 'None' } }));
    world.remove('Node', 'a100-0-0');
    world.sync(at(20));
    expect(cell(world, 'a100-0')).to.include({ health: 'Unhealthy', healthReason: 'NodeDeleted' });
  });

  it('answers the same bytes for the same request and clock, and reaches a fixed point', () => {
    const world = joinedPool();
    world.setNodeCondition('a100-1-0', 'Ready', 'False', at(100));
    world.pods.push(gpuPod('train', { nodeName: 'a100-1-0' }));
    world.sync(at(400));
    const request = world.request();
    const first = JSON.stringify(syncGPUCellPool(request, CONFIG, at(500)));
    expect(JSON.stringify(syncGPUCellPool(request, CONFIG, at(500)))).to.equal(first);
    world.sync(at(500));
    const status = JSON.stringify(world.status);
    world.sync(at(600));
    expect(JSON.stringify(world.status)).to.equal(status);
  });
});
