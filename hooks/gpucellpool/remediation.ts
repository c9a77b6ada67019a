/**
 * The health phase of a sync: every cell's health (health.ts), and the unhealthy cells retired
 * for replacement, the product's way (issue 28: replacement without eviction).
 *
 * - Each cell not in remediation is judged again. Its `healthSince` is carried forward while its
 *   health and reason stay; a new Unhealthy verdict is dated when its check failed (e.g. the Node
 *   condition's lastTransitionTime plus its duration), anything else now.
 * - With remediation Replace, while no more cells are unhealthy (Unhealthy or Remediating) than
 *   maxUnhealthy allows of the cells the pool watches (every cell not retired for scale-down),
 *   each Unhealthy cell is retired exactly like a scale-down cell: marked retiring here, so that
 *   the size phase no longer counts it and adds a replacement in the same sync, and the render
 *   phase cordons and taints its Node (kubecell.io/retiring:NoSchedule). Its machine goes once no
 *   consumer pod holds the GPU, or once spec.health.releaseTimeoutSeconds have passed since the
 *   remediation started (`releaseDue`); a cell without a Node, one that never joined, goes at
 *   once. Nothing is ever evicted. While the pool is being deleted every cell retires anyway.
 * - A Remediating cell keeps its reason and since; it is not judged again.
 * - A replacement a user requested (the annotation kubecell.io/replace=true on the cell's
 *   machine, e.g. to roll a cell onto a rotated join Secret) goes the same way: a cell judged
 *   Healthy becomes Unhealthy with reason ReplacementRequested (a cell found unhealthy keeps its
 *   own reason). It is honoured whatever spec.health.remediation says and is not counted towards
 *   maxUnhealthy (a request says nothing about a shared fault), but at most maxUnhealthy (at
 *   least 1) requested cells are in replacement at a time, the lowest ordinals first: annotating
 *   every machine rolls the pool gradually.
 * - The answer asks for a resync when the first verdict or release deadline falls due.
 */
import type { GPUCellPool } from '../generated/types/index.js';
import { formatTime, verdict, type ConditionVerdict } from '../status/conditions.js';
import { compareCells, type Cell } from './cells.js';
import { REPLACE_ANNOTATION } from './constants.js';
import {
  healthPolicy,
  judgeCell,
  maxUnhealthyCount,
  remediationGate,
  resyncSeconds,
  type CellHealth,
  type HealthPolicy,
  type HealthVerdict,
} from './health.js';
import { CELL_HEALTH_REASONS, CELLS_HEALTHY_REASONS } from './reasons.js';

export interface HealthInput {
  pool: GPUCellPool;
  /** The cells the status lists and the machines it does not (cells.ts `knownCells`). */
  cells: readonly Cell[];
  now: Date;
  deleting: boolean;
}

export interface HealthPhase {
  /** Every cell with its health; those chosen for remediation retiring. */
  cells: Cell[];
  remediationAllowed: ConditionVerdict;
  resyncAfterSeconds?: number;
}

/** Cells listed by name in a condition message, at most. */
const LISTED = 5;

export function assessHealth(input: HealthInput): HealthPhase {
  const { now } = input;
  const policy = healthPolicy(input.pool);
  const judged = input.cells.map((cell) => judgeOne(input, cell, policy));
  const watched = judged.filter(({ cell }) => !cell.retiring || isRemediating(cell));
  const unhealthy = watched.filter(
    ({ cell }) =>
      cell.health?.health !== 'Healthy' &&
      cell.health?.reason !== CELL_HEALTH_REASONS.ReplacementRequested,
  );
  const gate = remediationGate(policy, unhealthy.length, watched.length);
  const remediate = gate.allowed && !input.deleting;
  const forHealth = (cell: Cell) =>
    remediate &&
    !cell.retiring &&
    cell.health?.health === 'Unhealthy' &&
    cell.health.reason !== CELL_HEALTH_REASONS.ReplacementRequested;
  const requested = input.deleting
    ? new Set<string>()
    : requestedTurn(
        judged.map(({ cell }) => cell).filter((cell) => !forHealth(cell)),
        requestLimit(policy, watched.length),
      );
  const cells = judged.map(({ cell }) =>
    forHealth(cell) || requested.has(cell.name) ? retireForHealth(cell, policy, now) : cell,
  );
  const resync = resyncSeconds(now, [
    ...judged.map(({ nextCheck }) => nextCheck),
    ...cells.map((cell) =>
      isRemediating(cell) && !cell.health?.releaseDue ? releaseAt(cell, policy) : undefined,
    ),
  ]);
  return {
    cells,
    remediationAllowed: verdict('RemediationAllowed', gate.allowed, gate.reason, gate.message),
    ...(resync !== undefined ? { resyncAfterSeconds: resync } : {}),
  };
}

/** One cell with its health, and when its verdict next falls due (cells not retiring only). */
function judgeOne(
  input: HealthInput,
  cell: Cell,
  policy: HealthPolicy,
): { cell: Cell; nextCheck?: Date } {
  const { now } = input;
  const remediating = remediatingHealth(cell, policy, now);
  if (remediating !== undefined) return { cell: { ...cell, health: remediating } };
  const judgedVerdict = judgeCell(
    {
      provisioner: input.pool.spec.provisioner.type,
      machine: cell.machine,
      node: cell.node,
      nodeLost: cell.previousNode !== undefined && cell.node === undefined,
    },
    policy,
    now,
  );
  const found = requestedVerdict(cell, judgedVerdict);
  return {
    cell: { ...cell, health: healthOf(cell, found, now) },
    ...(!cell.retiring && found.nextCheck ? { nextCheck: found.nextCheck } : {}),
  };
}

function isRemediating(cell: Cell): boolean {
  return cell.health?.health === 'Remediating';
}

/** Has a user asked for the cell's replacement (kubecell.io/replace=true on its machine)? */
export function replacementRequested(cell: Pick<Cell, 'machine'>): boolean {
  return cell.machine?.metadata.annotations?.[REPLACE_ANNOTATION] === 'true';
}

/** Requested cells in replacement at a time: maxUnhealthy of the watched cells, at least 1. */
function requestLimit(policy: HealthPolicy, watched: number): number {
  return Math.max(1, maxUnhealthyCount(policy.maxUnhealthy, watched));
}

/**
 * The requested cells retired now: those not retiring yet, lowest ordinal first, while fewer
 * than `limit` requested cells are in replacement (Remediating with their machine still there).
 */
function requestedTurn(cells: readonly Cell[], limit: number): Set<string> {
  const inFlight = cells.filter(
    (cell) => cell.retiring && isRemediating(cell) && replacementRequested(cell),
  ).length;
  const waiting = [...cells]
    .filter((cell) => !cell.retiring && replacementRequested(cell))
    .sort(compareCells);
  return new Set(waiting.slice(0, Math.max(0, limit - inFlight)).map((cell) => cell.name));
}

/** A Healthy verdict turned Unhealthy (ReplacementRequested) by a user's request. */
function requestedVerdict(cell: Cell, found: HealthVerdict): HealthVerdict {
  if (cell.retiring || found.health !== 'Healthy' || !replacementRequested(cell)) return found;
  return {
    health: 'Unhealthy',
    reason: CELL_HEALTH_REASONS.ReplacementRequested,
    detail:
      `${REPLACE_ANNOTATION}=true on ${cell.machineName}: retired and replaced, never evicted, ` +
      `in turn with the other requested cells`,
  };
}

/** The health of a cell retired for its health by an earlier sync; undefined for any other. */
function remediatingHealth(cell: Cell, policy: HealthPolicy, now: Date): CellHealth | undefined {
  const previous = cell.previousHealth;
  if (!cell.retiring || previous?.health !== 'Remediating') return undefined;
  const health: CellHealth = { ...previous, detail: remediationDetail(previous.since, policy) };
  const due = releaseAt({ ...cell, health }, policy);
  return due !== undefined && due.getTime() <= now.getTime()
    ? { ...health, releaseDue: true }
    : health;
}

/** When a Remediating cell's machine goes whether or not its GPU is held, if ever. */
function releaseAt(cell: Cell, policy: HealthPolicy): Date | undefined {
  const timeout = policy.releaseTimeoutSeconds;
  const since = Date.parse(cell.health?.since ?? '');
  if (timeout === undefined || Number.isNaN(since)) return undefined;
  return new Date(since + timeout * 1000);
}

function remediationDetail(since: string, policy: HealthPolicy): string {
  const timeout = policy.releaseTimeoutSeconds;
  const until =
    timeout === undefined
      ? 'once no consumer pod holds its GPU'
      : `once no consumer pod holds its GPU, or ${timeout}s after`;
  return `retired and replaced since ${since}, its machine goes ${until}`;
}

/** The verdict as the status records it: since carried forward while health and reason stay. */
function healthOf(cell: Cell, found: HealthVerdict, now: Date): CellHealth {
  const previous = cell.previousHealth;
  const same = previous?.health === found.health && previous.reason === found.reason;
  const since = same ? previous.since : formatTime(found.since ?? now);
  return {
    health: found.health,
    reason: found.reason,
    since,
    ...(found.detail !== undefined ? { detail: found.detail } : {}),
  };
}

function retireForHealth(cell: Cell, policy: HealthPolicy, now: Date): Cell {
  const since = formatTime(now);
  const reason = cell.health?.reason ?? 'Starting';
  const detail = remediationDetail(since, policy);
  const releaseDue = policy.releaseTimeoutSeconds === 0;
  return {
    ...cell,
    retiring: true,
    phase: 'Retiring',
    health: { health: 'Remediating', reason, since, detail, ...(releaseDue ? { releaseDue } : {}) },
  };
}

/**
 * CellsHealthy, from the cells after this sync: every cell but those retired for scale-down; a
 * cell added after the health phase (no machine yet) is healthy.
 */
export function cellsHealthyCondition(cells: readonly Cell[]): ConditionVerdict {
  const watched = cells.filter((cell) => !cell.retiring || isRemediating(cell));
  const failing = watched.filter(
    (cell) => cell.health !== undefined && cell.health.health !== 'Healthy',
  );
  if (failing.length === 0) {
    return verdict(
      'CellsHealthy',
      true,
      CELLS_HEALTHY_REASONS.AllCellsHealthy,
      `${watched.length} of ${watched.length} cells healthy`,
    );
  }
  const named = failing.slice(0, LISTED).map((cell) => {
    const health = cell.health;
    return `${cell.name} ${health?.health ?? ''} (${health?.reason ?? ''}): ${health?.detail ?? ''}`;
  });
  const more = failing.length > LISTED ? ` and ${failing.length - LISTED} more` : '';
  return verdict(
    'CellsHealthy',
    false,
    CELLS_HEALTHY_REASONS.CellsUnhealthy,
    `${watched.length - failing.length} of ${watched.length} cells healthy: ${named.join('; ')}${more}`,
  );
}
