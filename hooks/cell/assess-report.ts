/**
 * A ManifestWork Cell's cluster parts (decision D34), from its cell agent's report as observe
 * read it (observe-report.ts): the report judged against the clock (one older than
 * REPORT_MAX_AGE_SECONDS is outdated), then turned into the parts a Local Cell computes from hub
 * objects (cluster-parts.ts).
 */
import { nodeHealthOf } from '../api/node-health.js';
import type { CellNode, CellProviderStatus } from '../generated/types/index.js';
import { formatQuantity, parseQuantity } from '../quantity/quantity.js';
import { AGENT_NAME, AGENT_NAMESPACE } from '../remote/contract.js';
import type { CellReport } from '../remote/report.js';
import type { ClusterParts } from './cluster-parts.js';
import { reportedTotals } from './cluster-report.js';
import type { CellControllerConfig } from './config.js';
import { boundNodeDetail, resourceList, type NodeDetail } from './node-detail.js';
import { summariseNodes } from './nodes.js';
import type { ObservedReport } from './observe-report.js';
import { HEARTBEAT_SECONDS } from './publication.js';
import { computeStorageInventory } from './storage.js';

/** Oldest report the Cell still counts as fresh: the limit a plan applies to status.observedAt. */
export const REPORT_MAX_AGE_SECONDS = 2 * HEARTBEAT_SECONDS;

export type AgentReportReading =
  | Exclude<ObservedReport, { state: 'read' }>
  | { state: 'outdated'; report: CellReport; message: string }
  | { state: 'fresh'; report: CellReport };

/** The reading, the parts it gives, and when a fresh report becomes outdated. */
export interface ReportAssessment {
  reading: AgentReportReading;
  parts: ClusterParts;
  outdatedAt?: Date;
}

export function assessReport(
  observed: ObservedReport,
  cluster: string,
  config: CellControllerConfig,
  now: Date,
): ReportAssessment {
  const reading = observed.state === 'read' ? judgeAge(observed.report, now, cluster) : observed;
  const outdatedAt = reportOutdatedAt(reading);
  return { reading, parts: reportedParts(reading, config), ...(outdatedAt ? { outdatedAt } : {}) };
}

function judgeAge(report: CellReport, now: Date, cluster: string): AgentReportReading {
  const age = now.getTime() - Date.parse(report.observedAt);
  if (age <= REPORT_MAX_AGE_SECONDS * 1000) return { state: 'fresh', report };
  return {
    state: 'outdated',
    report,
    message: `the cell agent on ManagedCluster ${cluster} last reported machine profile ${report.machineProfile} at ${report.observedAt}, more than ${REPORT_MAX_AGE_SECONDS}s ago; check Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} there (the last report is shown)`,
  };
}

/**
 * The instant a fresh report becomes outdated: its observedAt + REPORT_MAX_AGE_SECONDS (a sync at
 * that very millisecond still counts it fresh and asks again a second later); undefined for any
 * other reading. The Cell asks for a sync then, so an agent that stops reporting is seen on time
 * without any event or periodic resync. While the agent reports, its heartbeat (every
 * HEARTBEAT_SECONDS) moves the instant on before it is reached, and the Cell asks for the
 * earliest of what it waits for: the lease's expiry and the status heartbeat are never more than
 * HEARTBEAT_SECONDS away, so this instant is rarely the one asked.
 */
function reportOutdatedAt(reading: AgentReportReading): Date | undefined {
  if (reading.state !== 'fresh') return undefined;
  return new Date(Date.parse(reading.report.observedAt) + REPORT_MAX_AGE_SECONDS * 1000);
}

/** Nothing of the provider baseline is known ready (no report says so). */
function nothingReady(config: CellControllerConfig): CellProviderStatus {
  return {
    namespaceReady: false,
    k3kCRDsReady: config.k3kCRDs.length === 0,
    controllerReady: false,
    cniReady: false,
    topolvmReady: false,
  };
}

/**
 * The cluster parts from the report: as reported when fresh; the last report with storage and
 * NodePorts not fresh when outdated; nothing observed (no Nodes, nothing ready) without one.
 */
function reportedParts(reading: AgentReportReading, config: CellControllerConfig): ClusterParts {
  const report = 'report' in reading ? reading.report : undefined;
  const fresh = reading.state === 'fresh';
  const { totals, unscheduled } = reportedTotals(report);
  const provider = report?.provider ?? nothingReady(config);
  // The report's totals only: per-Node storage and times are not taken from it (the hub stamps
  // its own observedAt; per-Node detail from a report is not read yet).
  const storage = { ...(report?.storageInventory ?? computeStorageInventory([], undefined)) };
  delete storage.perNode;
  delete storage.observedAt;
  const nodePorts = { ...(report?.nodePorts ?? { allocated: 0, fresh: false }) };
  delete nodePorts.observedAt;
  return {
    provider,
    nodes: report
      ? {
          nodeCount: report.nodeCount,
          notReadyNodes: report.notReadyNodes,
          nodeAddresses: report.nodeAddresses,
          ...(report.refusedNodeAddresses
            ? { refusedNodeAddresses: report.refusedNodeAddresses }
            : {}),
        }
      : summariseNodes([]),
    ...(report?.nodes ? { nodeDetail: reportedNodeDetail(report) } : {}),
    totals,
    unscheduled,
    storageInventory: { ...storage, fresh: fresh && storage.fresh },
    nodePorts: { ...nodePorts, fresh: fresh && nodePorts.fresh },
  };
}

/**
 * The per-Node detail of a report, written anew field by field (quantities re-formatted from
 * their parsed values) and bounded as a Local Cell's: the report passed the schema (Node names,
 * label hashes, quantities), and is still bytes from the managed cluster. Nodes the agent left
 * out count as omitted.
 */
function reportedNodeDetail(report: CellReport): NodeDetail {
  const storage = new Map(
    (report.storageInventory.perNode ?? []).map((entry) => [entry.node, entry]),
  );
  const detail = boundNodeDetail(
    (report.nodes ?? []).map((node) => {
      const kept = storage.get(node.name);
      return {
        node: {
          name: node.name,
          ...(node.profile === undefined ? {} : { profile: node.profile }),
          ...(node.ready === undefined ? {} : { ready: node.ready }),
          ...(node.labelHash === undefined ? {} : { labelHash: node.labelHash }),
          capacity: resourceList(node.capacity ?? {}),
          allocatable: resourceList(node.allocatable ?? {}),
          activeRequested: resourceList(node.activeRequested ?? {}),
          pendingRequested: resourceList(node.pendingRequested ?? {}),
          readinessReasons: [...(node.readinessReasons ?? [])],
          ...reportedHealth(node),
        },
        storage: {
          node: node.name,
          ...(kept?.freeCapacity === undefined
            ? {}
            : { freeCapacity: formatQuantity(parseQuantity(kept.freeCapacity)) }),
          allocatedPV: formatQuantity(parseQuantity(kept?.allocatedPV ?? '0')),
        },
      };
    }),
  );
  const total = report.nodeCount.total ?? detail.nodes.length;
  return { ...detail, omitted: Math.max(detail.omitted, total - detail.nodes.length) };
}

/**
 * A reported Node's health verdict, when it is one the pool writes (the report's schema allows
 * only those; checked again here, as the Cell's own reading is). An agent older than the hub
 * reports none: no verdict.
 */
function reportedHealth(node: CellNode): Pick<CellNode, 'health' | 'healthReason'> {
  const health = nodeHealthOf(node.health, node.healthReason);
  return health === undefined ? {} : { health: health.health, healthReason: health.reason };
}
