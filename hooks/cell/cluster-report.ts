/**
 * The two sides of a remote Cell's inventory (decision D34), with the functions a Local Cell uses:
 *
 * - `clusterReport`: what the cell agent on a managed cluster reports for one machine profile
 *   (hooks/agent calls it with what it listed there): the same cluster parts a Local Cell computes
 *   (cluster-parts.ts), the per-resource amounts as quantities.
 * - `reportedTotals`: the hub's way back from a report to the amounts `cellInventory` takes, so
 *   a remote Cell's inventory is computed exactly as a local one, with the committed entitlements
 *   and declared devices only the hub knows.
 */
import type { CellReport, ReportedResource } from '../remote/report.js';
import { CELL_REPORT_VERSION } from '../remote/report.js';
import { formatQuantity, parseQuantity } from '../quantity/quantity.js';
import { formatTime } from '../status/conditions.js';
import { clusterParts } from './cluster-parts.js';
import type { Amounts, NodeTotals } from './inventory.js';
import type { ClusterObservation } from './observe.js';

/** The report of `profile` from what one cluster shows (see ClusterObservation). */
export function clusterReport(
  profile: string,
  observation: ClusterObservation,
  now: Date,
): CellReport {
  // The same per-Node detail and bound a Local Cell publishes; the hub bounds it again.
  const { nodeDetail: detail, ...parts } = clusterParts(observation, profile);
  return {
    version: CELL_REPORT_VERSION,
    machineProfile: profile,
    observedAt: formatTime(now),
    ...parts.nodes,
    nodes: detail.nodes,
    resources: reportedResources(parts.totals, parts.unscheduled),
    storageInventory: { ...parts.storageInventory, perNode: detail.perNode },
    nodePorts: parts.nodePorts,
    provider: parts.provider,
  };
}

const FIELDS = ['capacity', 'allocatable', 'requested', 'pending'] as const;

/**
 * One entry per resource any of the four amounts names; a field is absent when its amount does
 * not name the resource, so the hub rebuilds the same maps (an allocatable of 0 that a Node
 * lists is not the same as none: the inventory lists the former).
 */
function reportedResources(
  totals: NodeTotals,
  unscheduled: Amounts,
): Record<string, ReportedResource> {
  const amounts = { ...totals, pending: unscheduled };
  const names = new Set(FIELDS.flatMap((field) => [...amounts[field].keys()]));
  const resources: Record<string, ReportedResource> = {};
  for (const name of [...names].sort()) {
    const entry: ReportedResource = {};
    for (const field of FIELDS) {
      const amount = amounts[field].get(name);
      if (amount !== undefined) entry[field] = formatQuantity(amount);
    }
    resources[name] = entry;
  }
  return resources;
}

/** The Nodes' sums and the unscheduled demand a report carries, as `cellInventory` takes them. */
export function reportedTotals(report: CellReport | undefined): {
  totals: NodeTotals;
  unscheduled: Amounts;
} {
  const amounts = {
    capacity: new Map(),
    allocatable: new Map(),
    requested: new Map(),
    pending: new Map(),
  } satisfies Record<(typeof FIELDS)[number], Amounts>;
  for (const [name, entry] of Object.entries(report?.resources ?? {})) {
    for (const field of FIELDS) {
      const value = entry[field];
      if (value !== undefined) amounts[field].set(name, parseQuantity(value));
    }
  }
  const { pending, ...totals } = amounts;
  return { totals, unscheduled: pending };
}
