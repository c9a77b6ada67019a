// The rotated join Secret (issue 28, item 5): the content hash, user-data kept once a machine
// exists, the JoinContentCurrent condition, and the replacement a user requests with the
// annotation kubecell.io/replace=true on a cell's machine (retired, replaced, never evicted).
import { expect } from 'chai';
import { JOIN_CONTENT_HASH_ANNOTATION, REPLACE_ANNOTATION } from './constants.js';
import type { NodeObject, SecretObject } from './objects.js';
import { joinContentHash } from './template.js';
import {
  NOW,
  World,
  at,
  capiTemplates,
  clusterApiPool,
  consumerNamespace,
  gpuPod,
  joinSecret,
  joinedPool,
  kubeVirtPool,
  cellOf as cell,
} from './testing.js';

const ROTATED = 'ghijkl.0123456789ghijkl';

function secretOf(world: World, machine: string): SecretObject | undefined {
  return world
    .ofKind<SecretObject>('Secret')
    .find((s) => s.metadata.name === `${machine}-user-data`);
}

function userData(world: World, machine: string): string {
  return Buffer.from(secretOf(world, machine)?.data?.['userdata'] ?? '', 'base64').toString('utf8');
}

/** The join Secret changes its token (what a platform engineer does to rotate it). */
function rotate(world: World): void {
  world.related = world.related.map((object) =>
    object.kind === 'Secret' ? joinSecret(undefined, { token: ROTATED }) : object,
  );
}

/** A user annotates a cell's machine; Metacontroller's apply keeps the annotation. */
function annotate(world: World, machine: string): void {
  const found = world.machine(machine);
  found.metadata.annotations = { ...found.metadata.annotations, [REPLACE_ANNOTATION]: 'true' };
}

/** Syncs at `now`, keeping the user's annotation on `machines` (the test World merges shallowly). */
function syncAnnotated(world: World, now: Date, machines: readonly string[]): void {
  for (const machine of machines) {
    if (
      world.names('VirtualMachine').includes(machine) ||
      world.names('Machine').includes(machine)
    ) {
      annotate(world, machine);
    }
  }
  world.sync(now);
}

describe('joinContentHash', () => {
  it('is 16 hex digits, the same whatever the key order, and changes with any key or value', () => {
    const data = joinSecret().data ?? {};
    const hash = joinContentHash(data);
    expect(hash).to.match(/^[0-9a-f]{16}$/);
    const reversed = Object.fromEntries(Object.entries(data).reverse());
    expect(joinContentHash(reversed)).to.equal(hash);
    expect(joinContentHash(joinSecret(undefined, { token: ROTATED }).data)).to.not.equal(hash);
    expect(joinContentHash({ ...data, extra: '' })).to.not.equal(hash);
    // Keys and values cannot run into each other.
    expect(joinContentHash({ ab: 'Yw==' })).to.not.equal(joinContentHash({ a: 'YmM=' }));
  });
});

describe('GPUCellPool join Secret rotation', () => {
  it('stamps each rendered user-data Secret and each cell with the current content hash', () => {
    const world = joinedPool();
    const current = joinContentHash(joinSecret().data);
    expect(world.status.joinContentHash).to.equal(current);
    for (const c of world.status.cells ?? []) expect(c.joinContentHash, c.name).to.equal(current);
    expect(secretOf(world, 'a100-0-0')?.metadata.annotations).to.deep.equal({
      [JOIN_CONTENT_HASH_ANNOTATION]: current,
    });
    expect(world.condition('JoinContentCurrent')).to.include({
      status: 'True',
      reason: 'AllCellsCurrent',
      message: `2 of 2 cells booted from the current content of the join Secret kubecell-cells/cell-join (joinContentHash ${current})`,
    });
  });

  it('after a rotation, running cells keep their user-data and old hash, a new cell renders the new content', () => {
    const world = joinedPool();
    const old = joinContentHash(joinSecret().data);
    const before = structuredClone(secretOf(world, 'a100-0-0'));
    rotate(world);
    world.sync(at(20));
    const rotated = joinContentHash(joinSecret(undefined, { token: ROTATED }).data);
    expect(world.status.joinContentHash).to.equal(rotated);
    expect(secretOf(world, 'a100-0-0')).to.deep.equal(before);
    expect(userData(world, 'a100-1-0')).to.contain('TOKEN="abcdef.0123456789abcdef"');
    expect(cell(world, 'a100-0')?.joinContentHash).to.equal(old);
    expect(cell(world, 'a100-1')?.joinContentHash).to.equal(old);
    // Informational: the pool stays Ready.
    expect(world.condition('Ready')).to.include({ status: 'True' });
    expect(world.condition('JoinContentCurrent')).to.include({
      status: 'False',
      reason: 'CellsOnOlderJoinContent',
    });
    const message = world.condition('JoinContentCurrent')?.message ?? '';
    expect(message).to.equal(
      `2 of 2 cells booted from an older content of the join Secret kubecell-cells/cell-join ` +
        `than the current (joinContentHash ${rotated}): a100-0 (a100-0-0, ${old}), a100-1 ` +
        `(a100-1-0, ${old}); they keep running; to roll one, kubectl annotate -n kubecell-cells ` +
        `virtualmachines.kubevirt.io <machine> kubecell.io/replace=true: it is retired and ` +
        `replaced, never evicted`,
    );
    expect(message).to.not.contain(ROTATED);

    world.pool.spec.replicas = 3;
    world.sync(at(30));
    expect(userData(world, 'a100-2-0')).to.contain(`TOKEN="${ROTATED}"`);
    expect(cell(world, 'a100-2')?.joinContentHash).to.equal(rotated);
    expect(secretOf(world, 'a100-2-0')?.metadata.annotations).to.deep.equal({
      [JOIN_CONTENT_HASH_ANNOTATION]: rotated,
    });
  });

  it('a cell whose Secret is gone renders from the current content', () => {
    const world = joinedPool();
    rotate(world);
    world.remove('Secret', 'a100-1-0-user-data');
    world.sync(at(20));
    expect(userData(world, 'a100-1-0')).to.contain(`TOKEN="${ROTATED}"`);
    expect(cell(world, 'a100-1')?.joinContentHash).to.equal(world.status.joinContentHash);
    expect(world.condition('JoinContentCurrent')?.message).to.match(/^1 of 2 cells .*: a100-0 /);
  });

  it('upgrade: an unannotated Secret equal to the current rendering is stamped; one that differs is unknown', () => {
    const world = joinedPool();
    const current = joinContentHash(joinSecret().data);
    for (const secret of world.ofKind<SecretObject>('Secret')) delete secret.metadata.annotations;
    const second = secretOf(world, 'a100-1-0');
    if (second?.data) second.data['userdata'] = Buffer.from('#cloud-config\n').toString('base64');
    world.sync(at(20));
    expect(secretOf(world, 'a100-0-0')?.metadata.annotations).to.deep.equal({
      [JOIN_CONTENT_HASH_ANNOTATION]: current,
    });
    expect(cell(world, 'a100-0')?.joinContentHash).to.equal(current);
    // Kept as it is, its content unknown: it counts as older.
    expect(secretOf(world, 'a100-1-0')?.metadata.annotations).to.equal(undefined);
    expect(userData(world, 'a100-1-0')).to.equal('#cloud-config\n');
    expect(cell(world, 'a100-1')).to.not.have.property('joinContentHash');
    expect(world.condition('JoinContentCurrent')).to.include({ status: 'False' });
    expect(world.condition('JoinContentCurrent')?.message).to.contain('a100-1 (a100-1-0, unknown)');
  });

  it('Unknown while the join Secret does not exist; no hash in the status', () => {
    const world = joinedPool();
    world.related = world.related.filter((object) => object.kind !== 'Secret');
    world.sync(at(20));
    expect(world.status).to.not.have.property('joinContentHash');
    expect(world.condition('JoinContentCurrent')).to.include({
      status: 'Unknown',
      reason: 'JoinSecretUnavailable',
    });
    // Running cells keep their Secrets and the hash they were stamped with.
    expect(cell(world, 'a100-0')?.joinContentHash).to.equal(joinContentHash(joinSecret().data));
  });

  it('the same request and clock give the same status bytes', () => {
    const run = () => {
      const world = joinedPool();
      rotate(world);
      world.sync(at(20));
      return JSON.stringify(world.last);
    };
    expect(run()).to.equal(run());
  });

  it('a pool whose Cluster API bootstrap provider supplies the join data has no hash and no JoinContentCurrent', () => {
    const world = new World(clusterApiPool(), [...capiTemplates(), consumerNamespace()]);
    world.sync(NOW);
    world.sync(at(5));
    expect(world.status).to.not.have.property('joinContentHash');
    expect(world.condition('JoinContentCurrent')).to.equal(undefined);
    expect(world.status.cells?.[0]).to.not.have.property('joinContentHash');
  });
});

describe('GPUCellPool replacement requested with kubecell.io/replace=true', () => {
  it('retires the cell (cordoned, tainted, never evicted) and creates its replacement at once', () => {
    const world = joinedPool();
    rotate(world);
    world.pods.push(gpuPod('train', { nodeName: 'a100-0-0' }));
    syncAnnotated(world, at(20), ['a100-0-0']);
    expect(cell(world, 'a100-0')).to.include({
      phase: 'Retiring',
      health: 'Remediating',
      healthReason: 'ReplacementRequested',
      healthSince: '2026-11-30T12:00:20Z',
    });
    const retiring = world.last?.children.find(
      (c) => c.kind === 'Node' && c.metadata.name === 'a100-0-0',
    ) as NodeObject;
    expect(retiring.spec).to.deep.equal({
      unschedulable: true,
      taints: [{ key: 'kubecell.io/retiring', effect: 'NoSchedule' }],
    });
    expect(world.names('VirtualMachine')).to.deep.equal(['a100-0-0', 'a100-1-0', 'a100-2-0']);
    expect(cell(world, 'a100-2')?.joinContentHash).to.equal(world.status.joinContentHash);
    // Not a shared fault: RemediationAllowed counts no unhealthy cell.
    expect(world.condition('RemediationAllowed')?.message).to.match(/^0 of 2 cells unhealthy/);
    // The retiring cell is no longer listed as on older content; a100-1 still is.
    expect(world.condition('JoinContentCurrent')?.message).to.match(/^1 of 1 cells .*: a100-1 /);
    // The pod holds the GPU: the VM stays; nothing returned is a pod (the hook never evicts).
    syncAnnotated(world, at(30), ['a100-0-0']);
    expect(world.names('VirtualMachine')).to.include('a100-0-0');
    expect(world.last?.children.some((c) => c.kind === 'Pod')).to.equal(false);
    world.pods = [];
    syncAnnotated(world, at(40), ['a100-0-0']);
    expect(world.names('VirtualMachine')).to.not.include('a100-0-0');
  });

  it('is honoured with remediation None', () => {
    const world = joinedPool(kubeVirtPool({ health: { remediation: 'None' } }));
    syncAnnotated(world, at(20), ['a100-1-0']);
    expect(cell(world, 'a100-1')).to.include({
      health: 'Remediating',
      healthReason: 'ReplacementRequested',
    });
    expect(world.condition('RemediationAllowed')).to.include({ status: 'False' });
  });

  it('replaces at most maxUnhealthy requested cells at a time, lowest ordinal first', () => {
    const world = joinedPool(kubeVirtPool({ health: { maxUnhealthy: 1 } }));
    const both = ['a100-0-0', 'a100-1-0'];
    syncAnnotated(world, at(20), both);
    expect(cell(world, 'a100-0')).to.include({ health: 'Remediating', phase: 'Retiring' });
    expect(cell(world, 'a100-1')).to.include({
      health: 'Unhealthy',
      healthReason: 'ReplacementRequested',
      phase: 'Ready',
    });
    expect(world.condition('RemediationAllowed')).to.include({
      status: 'True',
      reason: 'RemediationAllowed',
    });
    // a100-0's VM goes (no pod holds its GPU); once it is gone, a100-1's turn.
    syncAnnotated(world, at(25), both);
    expect(world.names('VirtualMachine')).to.not.include('a100-0-0');
    expect(cell(world, 'a100-1')).to.include({ health: 'Unhealthy' });
    syncAnnotated(world, at(30), both);
    expect(cell(world, 'a100-1')).to.include({ health: 'Remediating', phase: 'Retiring' });
  });

  it('works on a Cluster API Machine too', () => {
    const world = new World(clusterApiPool(), [...capiTemplates(), consumerNamespace()]);
    world.sync(NOW);
    world.sync(at(5));
    syncAnnotated(world, at(10), ['a100-capi-0-0']);
    expect(cell(world, 'a100-capi-0')).to.include({
      health: 'Remediating',
      healthReason: 'ReplacementRequested',
    });
    // No Node joined: nothing to cordon, the Machine goes at once; the replacement is created.
    syncAnnotated(world, at(15), ['a100-capi-0-0']);
    expect(world.names('Machine')).to.deep.equal(['a100-capi-1-0']);
  });
});
