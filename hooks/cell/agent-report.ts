/**
 * A Cell with delivery ManifestWork (decision D34): its Nodes, inventory, storage, NodePorts and
 * provider baseline come from the cell agent's report, which OCM's work agent feeds back through
 * the ManifestWork kubecell-cell-agent in the ManagedCluster's hub namespace (feedback `report`
 * of the ConfigMap kubecell-cell-report-<profile>, a String). The hub never reads the managed
 * cluster itself. This module reads the report (`readAgentReport`, the one step that reads the
 * clock: a report older than REPORT_MAX_AGE_SECONDS is outdated), turns it into the status parts
 * a Local Cell computes from hub objects (`reportedParts`), and judges InventoryFresh.
 */
import type { Cell } from '../generated/types/index.js';
import { boundMessage } from '../json/echo.js';
import { formatQuantity, parseQuantity } from '../quantity/quantity.js';
import {
  AGENT_NAME,
  AGENT_NAMESPACE,
  AGENT_WORK_NAME,
  FEEDBACK,
  reportConfigMapName,
} from '../remote/contract.js';
import { configMapMeta, feedbackValue } from '../remote/manifest-work.js';
import { CellReportError, parseCellReport, type CellReport } from '../remote/report.js';
import { verdict, type ConditionVerdict } from '../status/conditions.js';
import type { CellControllerConfig } from './config.js';
import { HEARTBEAT_SECONDS } from './publication.js';
import { inventoryFrom } from './inventory.js';
import { countNodePorts } from './node-ports.js';
import { boundNodeDetail, resourceList, type NodeDetail } from './node-detail.js';
import { summariseNodes } from './nodes.js';
import type { CellObservation } from './observe.js';
import type { Amounts } from './pod-requests.js';
import { assessProvider, missingProviderParts } from './provider.js';
import { reportedTotals } from './cluster-report.js';
import { REASONS } from './reasons.js';
import { computeStorageInventory } from './storage.js';
import type { CellAssessment } from './assess.js';

/** Oldest report the Cell still counts as fresh: the limit a plan applies to status.observedAt. */
export const REPORT_MAX_AGE_SECONDS = 2 * HEARTBEAT_SECONDS;

export type AgentReportReading =
  | { state: 'notObserved' }
  | { state: 'missing' | 'unparsable'; message: string }
  | { state: 'outdated'; report: CellReport; message: string }
  | { state: 'fresh'; report: CellReport };

const MESSAGE_CHARS = 1024;

/** The report for the Cell's machine profile in its agent work, judged against `now`. */
export function readAgentReport(
  cell: Cell,
  observation: CellObservation,
  now: Date,
): AgentReportReading {
  if (!observation.agentWorkObserved) return { state: 'notObserved' };
  const cluster = cell.spec.managedClusterRef.name;
  const profile = cell.spec.machineProfile.name;
  const configMap = reportConfigMapName(profile);
  const where = `feedback "${FEEDBACK.report}" of ConfigMap ${AGENT_NAMESPACE}/${configMap} in ManifestWork ${cluster}/${AGENT_WORK_NAME}`;
  if (observation.agentWork === undefined) {
    return missing(
      `ManifestWork ${cluster}/${AGENT_WORK_NAME} does not exist yet: the kubecell-delivery controller installs the cell agent on ManagedCluster ${cluster}`,
    );
  }
  const value = feedbackValue(
    observation.agentWork,
    configMapMeta(AGENT_NAMESPACE, configMap),
    FEEDBACK.report,
  );
  if (value === undefined) {
    return missing(
      `the cell agent on ManagedCluster ${cluster} has not reported machine profile ${profile} yet (no ${where}); check Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} there`,
    );
  }
  if (value.type !== 'String' || !('string' in value) || typeof value.string !== 'string')
    return unparsable(`${where} is of type ${value.type}, not String`);
  let report: CellReport;
  try {
    report = parseCellReport(value.string);
  } catch (error) {
    if (!(error instanceof CellReportError)) throw error;
    return unparsable(`${where}: ${error.message}`);
  }
  if (report.machineProfile !== profile)
    return unparsable(`${where} reports machine profile ${report.machineProfile}, not ${profile}`);
  return judgeAge(report, now, cluster);
}

function missing(message: string): AgentReportReading {
  return { state: 'missing', message: boundMessage(message, MESSAGE_CHARS) };
}

function unparsable(message: string): AgentReportReading {
  return { state: 'unparsable', message: boundMessage(message, MESSAGE_CHARS) };
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
 * other reading. The
 * Cell asks for a sync then, so an agent that stops reporting is seen on time without any event
 * or periodic resync. While the agent reports, its heartbeat (every HEARTBEAT_SECONDS) moves the
 * instant on before it is reached, and the Cell asks for the earliest of what it waits for: the
 * lease's expiry and the status heartbeat are never more than HEARTBEAT_SECONDS away, so this
 * instant is rarely the one asked.
 */
export function reportOutdatedAt(reading: AgentReportReading): Date | undefined {
  if (reading.state !== 'fresh') return undefined;
  return new Date(Date.parse(reading.report.observedAt) + REPORT_MAX_AGE_SECONDS * 1000);
}

/** The parts of CellAssessment a Local Cell computes from hub objects. */
export type ClusterParts = Pick<
  CellAssessment,
  'provider' | 'missingProvider' | 'nodes' | 'inventory' | 'storageInventory' | 'nodePorts'
> &
  Partial<Pick<CellAssessment, 'nodeDetail'>>;

/**
 * The cluster parts from the report: as reported when fresh; the last report with storage and
 * NodePorts not fresh when outdated; nothing observed (no Nodes, nothing ready) without one.
 */
export function reportedParts(
  cell: Cell,
  reading: AgentReportReading,
  committed: Amounts,
  config: CellControllerConfig,
): ClusterParts {
  const report = 'report' in reading ? reading.report : undefined;
  const fresh = reading.state === 'fresh';
  const { totals, unscheduled } = reportedTotals(report);
  const provider = report?.provider ?? assessProvider({ k3kCRDs: [] }, config);
  // The report's totals only: per-Node storage and times are not taken from it (the hub stamps
  // its own observedAt; per-Node detail from a report is not read yet).
  const storage = { ...(report?.storageInventory ?? computeStorageInventory([], undefined)) };
  delete storage.perNode;
  delete storage.observedAt;
  const nodePorts = { ...(report?.nodePorts ?? countNodePorts(undefined)) };
  delete nodePorts.observedAt;
  return {
    provider,
    missingProvider: report
      ? missingProviderParts(provider)
      : ['unknown: no readable report from the cell agent'],
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
    inventory: inventoryFrom({ cell, totals, unscheduled, committed }),
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

/** InventoryFresh of a ManifestWork Cell: its sources observed, and its agent's report fresh. */
export function reportFreshCondition(
  reading: AgentReportReading,
  missingSources: readonly string[],
): ConditionVerdict {
  const notObserved = [
    ...missingSources,
    ...(reading.state === 'notObserved' ? [`ManifestWork ${AGENT_WORK_NAME}`] : []),
  ];
  if (notObserved.length > 0 || reading.state === 'notObserved') {
    return verdict(
      'InventoryFresh',
      false,
      REASONS.InventorySourceUnavailable,
      `not observed: ${notObserved.join(', ')}`,
    );
  }
  switch (reading.state) {
    case 'fresh':
      return verdict(
        'InventoryFresh',
        true,
        REASONS.InventoryReported,
        `the cell agent's report is at most ${REPORT_MAX_AGE_SECONDS}s old`,
      );
    case 'missing':
      return verdict('InventoryFresh', 'Unknown', REASONS.AgentReportMissing, reading.message);
    case 'unparsable':
      return verdict('InventoryFresh', false, REASONS.AgentReportUnparsable, reading.message);
    case 'outdated':
      return verdict('InventoryFresh', false, REASONS.AgentReportOutdated, reading.message);
  }
}
