// The health marks a pool writes on its Nodes (nodes.ts, through the sync): a cell that is not
// Healthy marks its Node with kubecell.io/cell-health and kubecell.io/cell-health-reason, a healthy
// one carries neither, and the marks go once the cell recovers.
import { expect } from 'chai';
import { NODE_HEALTH_CAUSES, NODE_HEALTH_STATES, readNodeHealth } from '../api/node-health.js';
import type { GPUCellPoolStatus } from '../generated/types/index.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';
import { CELL_HEALTH_STATES } from './constants.js';
import type { NodeObject } from './objects.js';
import { CELL_HEALTH_REASONS } from './reasons.js';
import { heldChildren } from './render.js';
import { keptNode, retiringNode } from './nodes.js';
import { World, at, joinedPool, kubeVirtPool, node } from './testing.js';

const HEALTH = 'kubecell.io/cell-health';
const REASON = 'kubecell.io/cell-health-reason';

function nodeChild(world: World, name: string): KubernetesObject | undefined {
  return world.last?.children.find((c) => c.kind === 'Node' && c.metadata.name === name);
}

describe('GPUCellPool Node health marks', () => {
  it('marks no Node of a healthy pool (nothing changes for healthy Nodes)', () => {
    const world = joinedPool();
    for (const name of ['a100-0-0', 'a100-1-0']) {
      expect(nodeChild(world, name)?.metadata).to.deep.equal({ name });
    }
  });

  it('marks an Unhealthy cell’s Node, and drops the marks once it recovers', () => {
    const world = joinedPool(kubeVirtPool({ health: { remediation: 'None' } }));
    world.setNodeCondition('a100-1-0', 'Ready', 'False', at(20));
    world.sync(at(400));
    expect(nodeChild(world, 'a100-1-0')?.metadata).to.deep.equal({
      name: 'a100-1-0',
      annotations: { [HEALTH]: 'Unhealthy', [REASON]: 'UnhealthyNode' },
    });
    expect(nodeChild(world, 'a100-0-0')?.metadata).to.deep.equal({ name: 'a100-0-0' });

    world.setNodeCondition('a100-1-0', 'Ready', 'True', at(410));
    world.sync(at(420));
    expect(nodeChild(world, 'a100-1-0')?.metadata).to.deep.equal({ name: 'a100-1-0' });
  });

  it('marks a Remediating cell’s Node beside its cordon and taint', () => {
    const world = joinedPool();
    world.setNodeCondition('a100-1-0', 'Ready', 'False', at(100));
    world.sync(at(400));
    const retiring = nodeChild(world, 'a100-1-0') as NodeObject;
    expect(retiring.metadata.annotations).to.deep.equal({
      [HEALTH]: 'Remediating',
      [REASON]: 'UnhealthyNode',
    });
    expect(retiring.spec).to.include({ unschedulable: true });
  });

  it('marks a failed machine’s Node MachineFailed', () => {
    const world = joinedPool(kubeVirtPool({ health: { remediation: 'None' } }));
    world.setMachineStatus('a100-0-0', { printableStatus: 'CrashLoopBackOff' });
    world.sync(at(20));
    expect(nodeChild(world, 'a100-0-0')?.metadata.annotations).to.deep.equal({
      [HEALTH]: 'Unhealthy',
      [REASON]: 'MachineFailed',
    });
  });

  it('keeps an empty annotations map where Metacontroller’s dynamic apply recorded one', () => {
    // Dynamic apply deletes every key of the last applied configuration the desired object lacks
    // (pkg/dynamic/apply/apply.go mergeObject): a dropped map would take the kubelet's annotations.
    const observed = node('a100-0-0', 'uuid');
    observed.metadata.annotations = {
      'metacontroller.k8s.io/last-applied-configuration': JSON.stringify({
        metadata: {
          name: 'a100-0-0',
          annotations: { [HEALTH]: 'Unhealthy', [REASON]: 'NodeDeleted' },
        },
      }),
      'node.alpha.kubernetes.io/ttl': '0',
    };
    expect(keptNode(observed).metadata).to.deep.equal({ name: 'a100-0-0', annotations: {} });
    expect(retiringNode(observed).metadata).to.deep.equal({ name: 'a100-0-0', annotations: {} });
    // Without a record of it (server-side apply, or never marked), none.
    expect(keptNode(node('a100-0-0', 'uuid')).metadata).to.deep.equal({ name: 'a100-0-0' });
    const garbled = node('a100-0-0', 'uuid');
    garbled.metadata.annotations = { 'metacontroller.k8s.io/last-applied-configuration': '{' };
    expect(keptNode(garbled).metadata).to.deep.equal({ name: 'a100-0-0' });
  });

  it('a sync that keeps everything keeps the marks it finds, and only valid ones', () => {
    const marked = node('a100-0-0', 'uuid');
    marked.metadata.annotations = { [HEALTH]: 'Remediating', [REASON]: 'UnhealthyNode' };
    const forged = node('a100-1-0', 'uuid');
    forged.metadata.annotations = { [HEALTH]: 'Unhealthy', [REASON]: 'Because' };
    const previous: GPUCellPoolStatus = {};
    const [kept, other] = heldChildren(previous, [marked, forged]);
    expect(kept?.metadata).to.deep.equal({
      name: 'a100-0-0',
      annotations: marked.metadata.annotations,
    });
    expect(other?.metadata).to.deep.equal({ name: 'a100-1-0' });
  });

  it('marks with the closed sets every reader accepts', () => {
    const unhealthy = Object.values(CELL_HEALTH_REASONS).filter(
      (reason) => reason !== 'NodeHealthy' && reason !== 'Starting',
    );
    for (const reason of unhealthy) expect(NODE_HEALTH_CAUSES).to.include(reason);
    expect([...NODE_HEALTH_STATES, 'Healthy'].sort()).to.deep.equal([...CELL_HEALTH_STATES].sort());
    expect(readNodeHealth({ [HEALTH]: 'Healthy', [REASON]: 'NodeHealthy' })).to.equal(undefined);
  });
});
