/**
 * The cells of a pool, from `status.cells` (the only memory) and what is observed: each cell's
 * incarnation, machine, current Node, the consumer pods holding its GPU, and its phase.
 *
 * - A cell that had joined and whose machine has disappeared gets a new incarnation (new machine
 *   name, new firmware UUID, new Node name).
 * - A machine of this pool whose cell the status does not list (the status was lost or
 *   rewritten) is taken back as its cell rather than deleted with its Node.
 */
import type { GPUCellPool, GPUCellStatus } from '../generated/types/index.js';
import type { Readiness } from './assess.js';
import { LABEL_KEYS, type CellPhase } from './constants.js';
import type { CellHealth, RecordedHealth } from './health.js';
import { cellOrdinal, incarnationOf, machineName, userDataSecretName } from './names.js';
import { currentNode, nodeReady } from './nodes.js';
import type { MachineObject, NodeObject } from './objects.js';
import type { CellIdentity } from './machines.js';
import { firmwareUuid } from './uuid.js';

export interface Cell {
  readonly name: string;
  readonly ordinal: number;
  readonly incarnation: number;
  readonly machineName: string;
  readonly uuid: string;
  /** The phase recorded before this sync (undefined for a new cell). */
  readonly previousPhase?: CellPhase;
  readonly previousSince?: string;
  readonly retiring: boolean;
  readonly machine?: MachineObject;
  readonly node?: NodeObject;
  /** Consumer pods holding the GPU; undefined when pods were not observed. */
  readonly holders?: readonly string[];
  readonly phase: CellPhase;
  /** The health the status recorded for this incarnation. */
  readonly previousHealth?: RecordedHealth;
  /** The Node the status recorded for this incarnation. */
  readonly previousNode?: string;
  /** The health found by this sync (remediation.ts); undefined for a cell added after it. */
  readonly health?: CellHealth;
  /** The join Secret content its user-data was rendered from (render.ts); undefined: not known. */
  readonly joinContentHash?: string;
}

/** What every cell of one sync is built from. */
export interface CellContext {
  pool: GPUCellPool;
  /** The pool's machines, by name. */
  machines: ReadonlyMap<string, MachineObject>;
  nodes: readonly NodeObject[];
  /** Consumer pods holding a GPU, by Node name; undefined when pods were not observed. */
  holders?: ReadonlyMap<string, string[]>;
  /** Why no new machine can be created, if so (assess.ts). */
  blocker: Readiness;
}

/** One cell incarnation to build, with what the status recorded about it. */
export interface CellSeed {
  name: string;
  incarnation: number;
  previousPhase?: CellPhase;
  previousSince?: string;
  /** The systemUUID the status recorded (Cluster API: the infrastructure provider decides it). */
  uuid?: string;
  retiring?: boolean;
  previousHealth?: RecordedHealth;
  previousNode?: string;
}

/** The cells the status lists, then the machines it does not list, taken back as their cells. */
export function knownCells(context: CellContext): Cell[] {
  const recorded = previousCells(context.pool).map((status) =>
    buildCell(context, recordedSeed(context, status)),
  );
  const listed = new Set(recorded.map((cell) => cell.name));
  return [...recorded, ...orphanSeeds(context, listed).map((seed) => buildCell(context, seed))];
}

/** A cell with its machine, current Node, the consumer pods holding its GPU, and its phase. */
export function buildCell(context: CellContext, seed: CellSeed): Cell {
  const { pool } = context;
  const name = machineName(seed.name, seed.incarnation);
  const machine = context.machines.get(name);
  const uuid =
    pool.spec.provisioner.type === 'ClusterAPI'
      ? (seed.uuid ?? '')
      : firmwareUuid(pool.metadata.uid ?? '', seed.name, seed.incarnation);
  const node = currentNode(pool, { uuid, machine, machineName: name }, context.nodes);
  const holders = context.holders && (node ? (context.holders.get(node.metadata.name) ?? []) : []);
  const retiring = seed.retiring ?? false;
  return {
    name: seed.name,
    ordinal: cellOrdinal(pool.metadata.name, seed.name) ?? Number.MAX_SAFE_INTEGER,
    incarnation: seed.incarnation,
    machineName: name,
    uuid,
    ...(seed.previousPhase !== undefined ? { previousPhase: seed.previousPhase } : {}),
    ...(seed.previousSince !== undefined ? { previousSince: seed.previousSince } : {}),
    retiring,
    ...(machine ? { machine } : {}),
    ...(node ? { node } : {}),
    ...(holders ? { holders } : {}),
    ...(seed.previousHealth ? { previousHealth: seed.previousHealth } : {}),
    ...(seed.previousNode !== undefined ? { previousNode: seed.previousNode } : {}),
    phase: retiring
      ? (seed.previousPhase ?? 'Provisioning')
      : activePhase({ machine, node }, context.blocker),
  };
}

/** The phase of a cell that is not retiring, from what is observed. */
function activePhase(cell: Pick<Cell, 'machine' | 'node'>, blocker: Readiness): CellPhase {
  if (cell.node) return nodeReady(cell.node) ? 'Ready' : 'NotReady';
  if (cell.machine === undefined && blocker.state === 'invalid') return 'Failed';
  return 'Provisioning';
}

/**
 * The cells `status.cells` lists. The validation layer checked the status against the schema
 * (hooks/controllers/request-validation.ts): every entry is named, each name once (a list map).
 */
export function previousCells(pool: GPUCellPool): GPUCellStatus[] {
  return pool.status?.cells ?? [];
}

function recordedSeed(context: CellContext, recorded: GPUCellStatus): CellSeed {
  const incarnation = incarnationOf(recorded.name, recorded.vm) ?? 0;
  const previousPhase = recorded.phase;
  const retiring = previousPhase === 'Retiring' || previousPhase === 'Deleting';
  const lost =
    !retiring &&
    !context.machines.has(machineName(recorded.name, incarnation)) &&
    (previousPhase === 'Ready' || previousPhase === 'NotReady');
  // The machine of a cell that had joined is gone: start a new incarnation, whose Node will have
  // another name and firmware UUID than the one left behind.
  if (lost) return { name: recorded.name, incarnation: incarnation + 1 };
  return {
    name: recorded.name,
    incarnation,
    ...(previousPhase !== undefined ? { previousPhase } : {}),
    ...(recorded.since !== undefined ? { previousSince: recorded.since } : {}),
    ...(recorded.systemUUID !== undefined ? { uuid: recorded.systemUUID } : {}),
    retiring,
    ...recordedHealth(recorded),
    ...(recorded.node !== undefined ? { previousNode: recorded.node } : {}),
  };
}

/** The health the status recorded, when it recorded all of it. */
function recordedHealth(recorded: GPUCellStatus): Pick<CellSeed, 'previousHealth'> {
  const { health, healthReason, healthSince } = recorded;
  if (health === undefined || healthReason === undefined || healthSince === undefined) return {};
  return { previousHealth: { health, reason: healthReason, since: healthSince } };
}

/** The latest incarnation of each cell of this pool that has a machine but no status entry. */
function orphanSeeds(context: CellContext, listed: ReadonlySet<string>): CellSeed[] {
  const poolName = context.pool.metadata.name;
  const orphans = new Map<string, number>();
  for (const machine of context.machines.values()) {
    const name = machine.metadata.labels?.[LABEL_KEYS.cell];
    if (name === undefined || listed.has(name) || cellOrdinal(poolName, name) === undefined) {
      continue;
    }
    const incarnation = incarnationOf(name, machine.metadata.name);
    if (incarnation === undefined) continue;
    orphans.set(name, Math.max(incarnation, orphans.get(name) ?? incarnation));
  }
  return [...orphans]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, incarnation]) => ({ name, incarnation }));
}

export function identity(cell: Cell): CellIdentity {
  return {
    cell: cell.name,
    machine: cell.machineName,
    uuid: cell.uuid,
    secret: userDataSecretName(cell.machineName),
  };
}

/** By ordinal, then name. */
export function compareCells(a: Cell, b: Cell): number {
  return a.ordinal - b.ordinal || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** Is no consumer pod holding the cell's GPU? False too when pods were not observed. */
export function isIdle(cell: Cell): boolean {
  return cell.holders !== undefined && cell.holders.length === 0;
}
