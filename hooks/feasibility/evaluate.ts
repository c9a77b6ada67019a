/**
 * The feasibility evaluation: would a VirtualCluster of a class fit on a Cell, in a
 * namespace, now? One pure function shared by VirtualClusterPlans and VirtualCluster
 * creation. It reads only its arguments (no clock, no I/O), so the same input always gives
 * the same checks, byte for byte.
 *
 * Checks, in report order (reason tokens in `./reasons.ts`, rules in docs/concepts.md):
 * CellFound, ClassFound, NamespaceAllowed (only when the Cell or the class sets a
 * namespaceSelector), CellLive, InventoryFresh, ResourceOffered (one per extended resource),
 * Capacity (one per capacity-checked resource), Storage, NodePorts, NamespaceAvailable. A check
 * that needs the Cell is left out when the Cell is missing, one that needs the class when the
 * class is missing: CellFound or ClassFound already fails.
 * Any Fail → Rejected; else any Unknown → Unknown; else Accepted. Each check is a function of
 * its own module: found.ts, namespace.ts, cell-state.ts, devices.ts, capacity.ts, storage.ts,
 * node-ports.ts; check.ts builds their entries.
 *
 * What is already committed on the Cell comes from the Cell alone: its `inventory[r].committed`
 * sums the entitlements of the VirtualClusters resolved to it, as of its last sync.
 *
 *   available = min(inventory.availableEstimate,
 *                   allocatable − max(requested + pending, committed))
 *
 * The VirtualClusters of the Cell are not read (a placement relates to O(1) objects, see
 * related.ts). Two placements accepted within the Cell's reaction time can therefore both fit
 * the same headroom; the Cell then shows availableEstimate < 0 (docs/limitations.md).
 */
import type {
  Cell,
  FeasibilityCheck,
  VirtualCluster,
  VirtualNodeClass,
} from '../generated/types/index.js';
import { checkCapacity } from './capacity.js';
import { checkCellLive, checkInventoryFresh } from './cell-state.js';
import { check } from './check.js';
import { checkResourceOffered } from './devices.js';
import { checkCellFound, checkClassFound } from './found.js';
import { checkNamespaceAllowed, checkNamespaceAvailable } from './namespace.js';
import { checkNodePorts } from './node-ports.js';
import { Decision, Reason } from './reasons.js';
import { checkStorage } from './storage.js';

/** An inclusive NodePort range, as the apiserver's `--service-node-port-range`. */
export interface NodePortRange {
  first: number;
  last: number;
}

/** The apiserver's default `--service-node-port-range`. */
export const DEFAULT_NODE_PORT_RANGE: Readonly<NodePortRange> = Object.freeze({
  first: 30000,
  last: 32767,
});

/**
 * How old the Cell's `status.observedAt` may be for its inventory to count as fresh: twice the
 * Cell's heartbeat (it refreshes observedAt at least every 300 s), so one late heartbeat does
 * not flap.
 */
export const DEFAULT_INVENTORY_MAX_AGE_SECONDS = 600;

export interface FeasibilityInput {
  /** The Cell named by the placement (`spec.cellRef.name`), for messages when absent. */
  cellName: string;
  /** The Cell as observed, with its status; undefined when it does not exist. */
  cell: Cell | undefined;
  /** The class named by the placement (`spec.classRef.name`). */
  className: string;
  /** The VirtualNodeClass as observed; undefined when it does not exist. */
  virtualNodeClass: VirtualNodeClass | undefined;
  /** The target host namespace. */
  namespace: string;
  /**
   * The target namespace's labels, to check `kubecell.io/host-namespace=true` and the
   * namespaceSelector of the Cell and the class. Leave undefined when the Namespace was not
   * observed: the host label is then not checked (the admission webhook enforces it for
   * VirtualClusters), and a namespaceSelector makes NamespaceAllowed Unknown.
   */
  namespaceLabels?: Readonly<Record<string, string>>;
  /**
   * VirtualClusters observed, other than the one being evaluated: those in `namespace` occupy
   * it (others are ignored). Capacity committed on the Cell is read from the Cell, not from here.
   */
  virtualClusters: readonly VirtualCluster[];
  /** The cluster's NodePort range. */
  nodePortRange: Readonly<NodePortRange>;
  /** See `DEFAULT_INVENTORY_MAX_AGE_SECONDS`. */
  inventoryMaxAgeSeconds?: number;
  now: Date;
}

export interface FeasibilityResult {
  decision: Decision;
  checks: FeasibilityCheck[];
}

/** Most checks a report may hold (`maxItems` of status.checks and status.feasibilityChecks). */
export const MAX_CHECKS = 128;

export function evaluateFeasibility(input: FeasibilityInput): FeasibilityResult {
  const { cell, virtualNodeClass } = input;
  const checks: FeasibilityCheck[] = [
    checkCellFound(cell, input.cellName),
    checkClassFound(virtualNodeClass, input.className),
  ];
  const allowed = checkNamespaceAllowed(input);
  if (allowed !== undefined) checks.push(allowed);
  let inventoryFresh = false;
  if (cell !== undefined) {
    const live = checkCellLive(cell);
    checks.push(live);
    const maxAgeSeconds = input.inventoryMaxAgeSeconds ?? DEFAULT_INVENTORY_MAX_AGE_SECONDS;
    const fresh = checkInventoryFresh(cell, input.now, maxAgeSeconds);
    // Capacity is measured only on a live Cell's fresh inventory: a Cell not Ready yet (its
    // Nodes not all registered) reports a fresh but partial inventory, whose missing resources
    // would otherwise fail the placement for good (D40).
    inventoryFresh = fresh.result === 'Pass' && live.result === 'Pass';
    checks.push(fresh);
  }
  if (cell !== undefined && virtualNodeClass !== undefined) {
    checks.push(...checkResourceOffered(cell, virtualNodeClass));
    checks.push(...checkCapacity(cell, virtualNodeClass, inventoryFresh));
    checks.push(checkStorage(cell, virtualNodeClass));
  }
  if (cell !== undefined) checks.push(checkNodePorts(cell, input.nodePortRange));
  checks.push(checkNamespaceAvailable(input));
  const bounded = boundChecks(checks);
  return { decision: decide(bounded), checks: bounded };
}

/** Any Fail → Rejected; else any Unknown → Unknown; else Accepted. */
export function decide(checks: readonly Pick<FeasibilityCheck, 'result'>[]): Decision {
  if (checks.some((check) => check.result === 'Fail')) return Decision.Rejected;
  if (checks.some((check) => check.result === 'Unknown')) return Decision.Unknown;
  return Decision.Accepted;
}

/**
 * Keeps a report within `MAX_CHECKS`. Only a class naming dozens of undeclared extended
 * resources can exceed it; its failed ResourceOffered checks are then folded into one.
 */
function boundChecks(checks: FeasibilityCheck[]): FeasibilityCheck[] {
  if (checks.length <= MAX_CHECKS) return checks;
  const failed = checks.filter(
    (c) => c.name === 'ResourceOffered' && c.result === 'Fail' && c.resource !== undefined,
  );
  const names = failed.map((c) => c.resource ?? '');
  const folded = check(
    'ResourceOffered',
    'Fail',
    Reason.DeviceNotDeclared,
    `The Cell's machine profile does not declare ${names.length} extended resources of the entitlement: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}.`,
  );
  const result: FeasibilityCheck[] = [];
  let placed = false;
  for (const c of checks) {
    if (failed.includes(c)) {
      if (!placed) result.push(folded);
      placed = true;
    } else {
      result.push(c);
    }
  }
  return result.slice(0, MAX_CHECKS);
}
