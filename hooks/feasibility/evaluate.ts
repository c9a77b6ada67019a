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
 * Any Fail → Rejected; else any Unknown → Unknown; else Accepted.
 *
 * What is already committed on the Cell: the Cell's `inventory[r].committed` sums the
 * entitlements of the VirtualClusters resolved to it as of the Cell's last sync. A
 * VirtualCluster resolved since then is not in it yet, so the evaluation also sums the
 * entitlements (`status.resolved.class.entitlement`) of the VirtualClusters it is given
 * that are resolved to this Cell, and uses the larger of the two:
 *
 *   available = min(inventory.availableEstimate,
 *                   allocatable − max(requested + pending, max(committed, committedSeen)))
 *
 * The larger of the two never credits a deletion the Cell has not observed yet, and never
 * misses a resolution it has not observed yet: the estimate errs towards Fail.
 */
import type {
  Cell,
  FeasibilityCheck,
  ResourceInventory,
  VirtualCluster,
  VirtualNodeClass,
} from '../generated/types/index.js';
import {
  addQuantities,
  compareQuantities,
  QuantityError,
  formatQuantity,
  maxQuantity,
  minQuantity,
  subtractQuantities,
  ZERO_QUANTITY,
  type ParsedQuantity,
} from '../quantity/quantity.js';
import { LABELS } from '../kube/labels.js';
import { findCondition } from '../status/conditions.js';
import { describeRule, evaluateNamespaceRules, type NamespaceRule } from './namespace-selector.js';
import { Decision, Reason, type CheckName, type CheckResult } from './reasons.js';
import {
  capacityRequirements,
  compareStrings,
  extendedResources,
  storageRequirement,
  tryParse,
  type InvalidEntry,
} from './resources.js';

/** The label a namespace needs before it may host a VirtualCluster. */
export const HOST_NAMESPACE_LABEL = LABELS.hostNamespace;

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
 * How old the Cell's newest observation may be for its inventory to count as fresh: four
 * times the Cell controller's 30-second resync, so one or two missed resyncs do not flap.
 */
export const DEFAULT_INVENTORY_MAX_AGE_SECONDS = 120;

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
   * VirtualClusters observed, in any namespace, other than the one being evaluated. Those
   * resolved to the Cell count as committed; those in `namespace` occupy it.
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
  const checks: FeasibilityCheck[] = [checkCellFound(input), checkClassFound(input)];
  const allowed = checkNamespaceAllowed(input);
  if (allowed !== undefined) checks.push(allowed);
  let inventoryFresh = false;
  if (cell !== undefined) {
    checks.push(checkCellLive(cell));
    const fresh = checkInventoryFresh(cell, input);
    inventoryFresh = fresh.result === 'Pass';
    checks.push(fresh);
  }
  if (cell !== undefined && virtualNodeClass !== undefined) {
    checks.push(...checkResourceOffered(cell, virtualNodeClass));
    checks.push(...checkCapacity(cell, virtualNodeClass, input.virtualClusters, inventoryFresh));
    checks.push(checkStorage(cell, virtualNodeClass));
  }
  if (cell !== undefined) checks.push(checkNodePorts(cell, input.nodePortRange));
  checks.push(checkNamespace(input));
  const bounded = boundChecks(checks);
  return { decision: decide(bounded), checks: bounded };
}

/** Any Fail → Rejected; else any Unknown → Unknown; else Accepted. */
export function decide(checks: readonly Pick<FeasibilityCheck, 'result'>[]): Decision {
  if (checks.some((check) => check.result === 'Fail')) return Decision.Rejected;
  if (checks.some((check) => check.result === 'Unknown')) return Decision.Unknown;
  return Decision.Accepted;
}

/** Whether a VirtualCluster's `status.resolved` names this Cell (and, when both are known, its UID). */
export function isResolvedToCell(vc: VirtualCluster, cell: Cell): boolean {
  const resolved = vc.status?.resolved?.cell;
  if (resolved === undefined || resolved.name !== cell.metadata.name) return false;
  const uid = cell.metadata.uid;
  return uid === undefined || resolved.uid === undefined || resolved.uid === uid;
}

// --- the checks ---

function checkCellFound({ cell, cellName }: FeasibilityInput): FeasibilityCheck {
  if (cell !== undefined) {
    return check('CellFound', 'Pass', Reason.CellFound, `Cell ${cellName} exists.`);
  }
  return check(
    'CellFound',
    'Fail',
    Reason.CellNotFound,
    `Cell ${cellName} does not exist in the KubeCell namespace; create it or name an existing Cell in spec.cellRef.name.`,
  );
}

function checkClassFound({ virtualNodeClass, className }: FeasibilityInput): FeasibilityCheck {
  if (virtualNodeClass !== undefined) {
    return check('ClassFound', 'Pass', Reason.ClassFound, `VirtualNodeClass ${className} exists.`);
  }
  return check(
    'ClassFound',
    'Fail',
    Reason.ClassNotFound,
    `VirtualNodeClass ${className} does not exist; create it or name an existing class in spec.classRef.name.`,
  );
}

/**
 * The namespaceSelector of the Cell and of the class, when either sets one: both must select the
 * target namespace. Without a selector nothing is restricted and no check is reported, so the
 * reports of placements without selectors are what they were before selectors existed.
 */
function checkNamespaceAllowed(input: FeasibilityInput): FeasibilityCheck | undefined {
  const { cell, virtualNodeClass, namespace, namespaceLabels } = input;
  const rules: NamespaceRule[] = [];
  if (cell?.spec?.namespaceSelector !== undefined) {
    rules.push({ what: `Cell ${input.cellName}`, selector: cell.spec.namespaceSelector });
  }
  if (virtualNodeClass?.spec?.namespaceSelector !== undefined) {
    rules.push({
      what: `VirtualNodeClass ${input.className}`,
      selector: virtualNodeClass.spec.namespaceSelector,
    });
  }
  if (rules.length === 0) return undefined;
  if (namespaceLabels === undefined) {
    return check(
      'NamespaceAllowed',
      'Unknown',
      Reason.NamespaceLabelsUnknown,
      `Namespace ${namespace} was not observed, so ${rules.map(describeRule).join(' and ')} cannot be checked against its labels; the check runs again once the Namespace is observed.`,
    );
  }
  const results = evaluateNamespaceRules(rules, namespaceLabels);
  const refused = results.filter((result) => result.verdict.kind !== 'selected');
  if (refused.length > 0) {
    const them = refused.length === 1 ? refused[0]?.what : 'them';
    return check(
      'NamespaceAllowed',
      'Fail',
      Reason.NamespaceNotAllowed,
      `Namespace ${namespace} is not allowed by ${refused.map(describeRule).join(' and ')}: the platform team restricts which namespaces may use ${them}. Use a Cell and a VirtualNodeClass whose namespaceSelector selects ${namespace}, or ask the platform team to label the namespace or widen the selector.`,
    );
  }
  return check(
    'NamespaceAllowed',
    'Pass',
    Reason.NamespaceAllowed,
    `Namespace ${namespace} is selected by ${results.map(describeRule).join(' and ')}.`,
  );
}

function checkCellLive(cell: Cell): FeasibilityCheck {
  const status = cell.status;
  const phase = status?.phase;
  if (phase === undefined) {
    return check(
      'CellLive',
      'Unknown',
      Reason.CellNotObserved,
      'The Cell has no status yet: the kubecell-cell controller has not observed it. Wait for its first sync.',
    );
  }
  if (phase !== 'Ready') {
    return check(
      'CellLive',
      'Fail',
      Reason.CellNotReady,
      `The Cell's phase is ${phase}, not Ready; see the Cell's conditions for why.`,
    );
  }
  const lease = status?.managedCluster;
  if (lease?.leaseFresh === false) {
    return check(
      'CellLive',
      'Fail',
      Reason.LeaseStale,
      `The ManagedCluster's lease is stale (last renewed ${lease.leaseRenewTime ?? 'never'}); the cluster agent must renew it.`,
    );
  }
  if (lease?.leaseFresh !== true || lease.leaseRenewTime === undefined) {
    return check(
      'CellLive',
      'Unknown',
      Reason.LeaseUnknown,
      "The Cell's status does not say whether the ManagedCluster's lease is fresh; wait for the Cell controller to observe the lease.",
    );
  }
  return check(
    'CellLive',
    'Pass',
    Reason.CellLive,
    `The Cell is Ready and its lease was renewed at ${lease.leaseRenewTime}.`,
  );
}

function checkInventoryFresh(cell: Cell, input: FeasibilityInput): FeasibilityCheck {
  const condition = findCondition(cell.status?.conditions, 'InventoryFresh');
  if (condition === undefined) {
    return check(
      'InventoryFresh',
      'Unknown',
      Reason.InventoryNotObserved,
      'The Cell has not reported its inventory yet (no InventoryFresh condition); wait for the Cell controller.',
    );
  }
  if (condition.status !== 'True') {
    return check(
      'InventoryFresh',
      'Unknown',
      Reason.InventoryStale,
      `The Cell's InventoryFresh condition is ${condition.status} (${condition.reason}${condition.message ? `: ${condition.message}` : ''}); capacity cannot be judged until it is True.`,
    );
  }
  const observedAt = newestObservation(cell);
  const maxAgeSeconds = input.inventoryMaxAgeSeconds ?? DEFAULT_INVENTORY_MAX_AGE_SECONDS;
  if (observedAt !== undefined) {
    const ageSeconds = Math.floor((input.now.getTime() - observedAt.getTime()) / 1000);
    if (ageSeconds > maxAgeSeconds) {
      return check(
        'InventoryFresh',
        'Unknown',
        Reason.InventoryOutdated,
        `The Cell's newest inventory observation is ${ageSeconds}s old (limit ${maxAgeSeconds}s); the kubecell-cell controller may not be syncing it.`,
      );
    }
  }
  // The message names the limit, never the observation time: the Cell stamps a new time on
  // every sync, and a pending VirtualCluster re-evaluates on every change of its Cell, so a time
  // here would change its status on every Cell sync, which re-syncs the Cell (it relates the
  // VirtualClusters placed on it): a loop between the two controllers.
  return check(
    'InventoryFresh',
    'Pass',
    Reason.InventoryFresh,
    observedAt === undefined
      ? "The Cell's inventory is current."
      : `The Cell's inventory is current (its newest observation is at most ${maxAgeSeconds}s old).`,
  );
}

function checkResourceOffered(cell: Cell, cls: VirtualNodeClass): FeasibilityCheck[] {
  const names = extendedResources(cls.spec.entitlement?.workloadHard);
  const devices = cell.spec.machineProfile?.devices ?? [];
  const profile = cell.spec.machineProfile?.name ?? '';
  if (names.length === 0) {
    return [
      check(
        'ResourceOffered',
        'Pass',
        Reason.NoExtendedResources,
        'The entitlement names no extended resources.',
      ),
    ];
  }
  const declared = devices.map((device) => device.resourceName);
  return names.map((name) => {
    const device = devices.find((candidate) => candidate.resourceName === name);
    if (device !== undefined) {
      return check(
        'ResourceOffered',
        'Pass',
        Reason.DeviceDeclared,
        `Machine profile ${profile} declares ${name} (device ${device.name}).`,
        { resource: name },
      );
    }
    return check(
      'ResourceOffered',
      'Fail',
      Reason.DeviceNotDeclared,
      `Machine profile ${profile} does not declare ${name} (declared: ${declared.length === 0 ? 'none' : declared.join(', ')}); resource names must match character for character. Use a class whose extended resources the Cell declares, or another Cell.`,
      { resource: name },
    );
  });
}

function checkCapacity(
  cell: Cell,
  cls: VirtualNodeClass,
  virtualClusters: readonly VirtualCluster[],
  inventoryFresh: boolean,
): FeasibilityCheck[] {
  const { required, invalid } = capacityRequirements(cls.spec.entitlement?.workloadHard);
  const resources = [...new Set([...required.keys(), ...invalid.keys()])].sort(compareStrings);
  const committedSeen = committedBy(cell, virtualClusters);
  return resources.map((resource) => {
    const bad = invalid.get(resource);
    if (bad !== undefined) return invalidQuantityCheck('Capacity', resource, bad);
    const need = required.get(resource) ?? ZERO_QUANTITY;
    const needText = formatQuantity(need);
    const inventory = cell.status?.inventory?.[resource];
    const estimate =
      inventory === undefined ? undefined : availableFor(inventory, committedSeen.get(resource));
    if (compareQuantities(need, ZERO_QUANTITY) <= 0) {
      return check(
        'Capacity',
        'Pass',
        Reason.CapacityAvailable,
        `The class needs no ${resource}.`,
        { resource, required: needText },
      );
    }
    if (!inventoryFresh) {
      return check(
        'Capacity',
        'Unknown',
        Reason.InventoryNotFresh,
        `The class needs ${needText} ${resource}, but the Cell's inventory is not fresh (see InventoryFresh); the check runs again on fresh inventory.`,
        {
          resource,
          required: needText,
          available: estimate?.kind === 'ok' ? formatQuantity(estimate.available) : undefined,
        },
      );
    }
    if (inventory === undefined) {
      return check(
        'Capacity',
        'Fail',
        Reason.ResourceNotInInventory,
        `The class needs ${needText} ${resource}, but no Ready Node of the Cell offers ${resource}.`,
        { resource, required: needText, available: '0' },
      );
    }
    if (estimate?.kind === 'invalid') {
      return check(
        'Capacity',
        'Unknown',
        Reason.InvalidInventory,
        `The Cell's inventory for ${resource} holds an invalid quantity (${estimate.error}).`,
        { resource, required: needText },
      );
    }
    if (estimate === undefined || estimate.kind === 'incomplete') {
      return check(
        'Capacity',
        'Unknown',
        Reason.InventoryIncomplete,
        `The Cell's inventory for ${resource} has neither allocatable nor availableEstimate.`,
        { resource, required: needText },
      );
    }
    const availableText = formatQuantity(estimate.available);
    const fits = compareQuantities(need, estimate.available) <= 0;
    return check(
      'Capacity',
      fits ? 'Pass' : 'Fail',
      fits ? Reason.CapacityAvailable : Reason.InsufficientCapacity,
      fits
        ? `The class needs ${needText} ${resource}; the Cell can still promise ${availableText}${estimate.explanation}.`
        : `The class needs ${needText} ${resource}, but the Cell can only promise ${availableText}${estimate.explanation}. Choose a smaller class, another Cell, or free capacity on this one.`,
      { resource, required: needText, available: availableText },
    );
  });
}

function checkStorage(cell: Cell, cls: VirtualNodeClass): FeasibilityCheck {
  const requirement = storageRequirement(
    cls.spec.entitlement?.workloadHard,
    cls.spec.storageClassName,
  );
  if (requirement.kind === 'invalid') {
    return invalidQuantityCheck('Storage', requirement.entry.key, requirement.entry);
  }
  if (requirement.kind === 'none') {
    return check(
      'Storage',
      'Pass',
      Reason.NoStorageRequested,
      'The entitlement limits no storage (requests.storage), so there is nothing to compare with free capacity.',
      { resource: 'requests.storage' },
    );
  }
  const resource = requirement.key;
  const needText = formatQuantity(requirement.required);
  const storage = cell.status?.storageInventory;
  if (storage?.fresh !== true) {
    return check(
      'Storage',
      'Unknown',
      Reason.StorageNotFresh,
      `The class needs ${needText} of storage, but the Cell's storage inventory is ${storage === undefined ? 'not reported' : 'not fresh'}.`,
      { resource, required: needText },
    );
  }
  if (storage.freeCapacityKnown !== true || storage.freeCapacity === undefined) {
    return check(
      'Storage',
      'Unknown',
      Reason.FreeCapacityUnknown,
      `The class needs ${needText} of storage, but the Cell's free capacity is unknown: every Ready profile Node must carry TopoLVM's capacity.topolvm.io/<device-class> annotation.`,
      { resource, required: needText },
    );
  }
  const free = tryParse(storage.freeCapacity);
  if (free instanceof QuantityError) {
    return check(
      'Storage',
      'Unknown',
      Reason.InvalidInventory,
      `The Cell's storage free capacity is an invalid quantity (${free.message}).`,
      { resource, required: needText },
    );
  }
  const freeText = formatQuantity(free);
  if (compareQuantities(requirement.required, free) <= 0) {
    return check(
      'Storage',
      'Pass',
      Reason.StorageAvailable,
      `The class needs ${needText} of storage; TopoLVM reports ${freeText} free on the Cell.`,
      { resource, required: needText, available: freeText },
    );
  }
  return check(
    'Storage',
    'Fail',
    Reason.InsufficientStorage,
    `The class needs ${needText} of storage, but TopoLVM reports only ${freeText} free on the Cell. Choose a class with less storage or another Cell.`,
    { resource, required: needText, available: freeText },
  );
}

function checkNodePorts(cell: Cell, range: Readonly<NodePortRange>): FeasibilityCheck {
  const nodePorts = cell.status?.nodePorts;
  if (nodePorts?.allocated === undefined) {
    return check(
      'NodePorts',
      'Unknown',
      Reason.NodePortsUnknown,
      "The Cell has not reported NodePort usage yet; the VirtualCluster's API needs one NodePort.",
      { required: '1' },
    );
  }
  if (nodePorts.fresh !== true) {
    return check(
      'NodePorts',
      'Unknown',
      Reason.NodePortsNotFresh,
      "The Cell's NodePort observation is not fresh; the VirtualCluster's API needs one NodePort.",
      { required: '1' },
    );
  }
  const size = range.last - range.first + 1;
  const free = Math.max(0, size - nodePorts.allocated);
  const rangeText = `${range.first}-${range.last}`;
  if (free >= 1) {
    return check(
      'NodePorts',
      'Pass',
      Reason.NodePortsAvailable,
      `${free} of ${size} NodePorts (${rangeText}) are free; the VirtualCluster's API needs one.`,
      { required: '1', available: String(free) },
    );
  }
  return check(
    'NodePorts',
    'Fail',
    Reason.NodePortRangeExhausted,
    `All ${size} NodePorts (${rangeText}) are allocated; the VirtualCluster's API needs one. Delete unused NodePort Services or widen --service-node-port-range (and KUBECELL_NODEPORT_RANGE).`,
    { required: '1', available: '0' },
  );
}

function checkNamespace(input: FeasibilityInput): FeasibilityCheck {
  const { namespace, namespaceLabels } = input;
  if (namespaceLabels !== undefined && namespaceLabels[HOST_NAMESPACE_LABEL] !== 'true') {
    return check(
      'NamespaceAvailable',
      'Fail',
      Reason.NotHostNamespace,
      `Namespace ${namespace} is not a host namespace: it lacks the label ${HOST_NAMESPACE_LABEL}=true, which the platform team sets (kubectl label namespace ${namespace} ${HOST_NAMESPACE_LABEL}=true).`,
    );
  }
  const hosted = input.virtualClusters
    .filter((vc) => vc.metadata.namespace === namespace)
    .map((vc) => vc.metadata.name)
    .sort(compareStrings);
  if (hosted.length > 0) {
    const shown = hosted.slice(0, 10).join(', ') + (hosted.length > 10 ? ', …' : '');
    return check(
      'NamespaceAvailable',
      'Fail',
      Reason.NamespaceOccupied,
      `Namespace ${namespace} already hosts VirtualCluster ${shown}; a namespace hosts at most one. Use another namespace.`,
    );
  }
  return check(
    'NamespaceAvailable',
    'Pass',
    Reason.NamespaceAvailable,
    `Namespace ${namespace} hosts no VirtualCluster.`,
  );
}

// --- helpers ---

type Estimate =
  | { kind: 'ok'; available: ParsedQuantity; explanation: string }
  | { kind: 'incomplete' }
  | { kind: 'invalid'; error: string };

/** What a new VirtualCluster can still be promised of one resource (see the file comment). */
function availableFor(
  inventory: ResourceInventory,
  committedSeen: ParsedQuantity | undefined,
): Estimate {
  const values: Partial<Record<keyof ResourceInventory, ParsedQuantity>> = {};
  for (const field of [
    'allocatable',
    'requested',
    'pending',
    'committed',
    'availableEstimate',
  ] as const) {
    const raw = inventory[field];
    if (raw === undefined) continue;
    const parsed = tryParse(raw);
    if (parsed instanceof QuantityError) return { kind: 'invalid', error: parsed.message };
    values[field] = parsed;
  }
  const { allocatable, availableEstimate } = values;
  if (allocatable === undefined) {
    return availableEstimate === undefined
      ? { kind: 'incomplete' }
      : {
          kind: 'ok',
          available: availableEstimate,
          explanation: " (the Cell's availableEstimate)",
        };
  }
  const used = addQuantities(values.requested ?? ZERO_QUANTITY, values.pending ?? ZERO_QUANTITY);
  const cellCommitted = values.committed ?? ZERO_QUANTITY;
  const committed = maxQuantity(cellCommitted, committedSeen ?? ZERO_QUANTITY);
  let available = subtractQuantities(allocatable, maxQuantity(used, committed));
  if (availableEstimate !== undefined) available = minQuantity(available, availableEstimate);
  const seenMore = compareQuantities(committed, cellCommitted) > 0;
  const explanation =
    ` (allocatable ${formatQuantity(allocatable)} − max(requested + pending ${formatQuantity(used)}, ` +
    `committed ${formatQuantity(committed)})` +
    (seenMore ? ', counting VirtualClusters resolved since the Cell last synced' : '') +
    ')';
  return { kind: 'ok', available, explanation };
}

/** Sum of the entitlements of the VirtualClusters resolved to the Cell, per inventory resource. */
function committedBy(
  cell: Cell,
  virtualClusters: readonly VirtualCluster[],
): Map<string, ParsedQuantity> {
  const sums = new Map<string, ParsedQuantity>();
  for (const vc of virtualClusters) {
    if (!isResolvedToCell(vc, cell)) continue;
    const { required } = capacityRequirements(vc.status?.resolved?.class.entitlement?.workloadHard);
    for (const [resource, amount] of required) {
      sums.set(resource, addQuantities(sums.get(resource) ?? ZERO_QUANTITY, amount));
    }
  }
  return sums;
}

function newestObservation(cell: Cell): Date | undefined {
  const stamps = [
    cell.status?.storageInventory?.observedAt,
    cell.status?.nodePorts?.observedAt,
    ...(cell.status?.nodes ?? []).map((node) => node.observedAt),
  ];
  let newest: number | undefined;
  for (const stamp of stamps) {
    if (stamp === undefined) continue;
    const time = Date.parse(stamp);
    if (Number.isNaN(time)) continue;
    if (newest === undefined || time > newest) newest = time;
  }
  return newest === undefined ? undefined : new Date(newest);
}

function invalidQuantityCheck(
  name: CheckName,
  resource: string,
  entry: InvalidEntry,
): FeasibilityCheck {
  return check(
    name,
    'Fail',
    Reason.InvalidQuantity,
    `The class's entitlement ${entry.key} is not a valid quantity (${entry.error}); fix the VirtualNodeClass.`,
    { resource },
  );
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

function check(
  name: CheckName,
  result: CheckResult,
  reason: Reason,
  message: string,
  figures: { resource?: string; required?: string; available?: string } = {},
): FeasibilityCheck {
  return {
    name,
    ...(figures.resource === undefined ? {} : { resource: figures.resource }),
    ...(figures.required === undefined ? {} : { required: figures.required }),
    ...(figures.available === undefined ? {} : { available: figures.available }),
    result,
    reason,
    message: message.length > 4096 ? `${message.slice(0, 4095)}…` : message,
  };
}
