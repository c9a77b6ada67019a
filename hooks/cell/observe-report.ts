/**
 * A ManifestWork Cell's cluster as the hub sees it (decision D34): the cell agent's report for the
 * Cell's machine profile, which OCM's work agent feeds back through the ManifestWork
 * kubecell-cell-agent in the ManagedCluster's hub namespace (feedback `report` of the ConfigMap
 * kubecell-cell-report-<profile>, a String). Read and checked against the Cell status's own schema
 * here, once (observe.ts); its age is judged with the clock later (assess-report.ts). The hub
 * never reads the managed cluster itself.
 */
import type { Cell } from '../generated/types/index.js';
import { boundMessage } from '../json/echo.js';
import {
  AGENT_NAME,
  AGENT_NAMESPACE,
  AGENT_WORK_NAME,
  FEEDBACK,
  reportConfigMapName,
} from '../remote/contract.js';
import {
  configMapMeta,
  feedbackValue,
  type ObservedManifestWork,
} from '../remote/manifest-work.js';
import { CellReportError, parseCellReport, type CellReport } from '../remote/report.js';

export type ObservedReport =
  | { state: 'notObserved' }
  | { state: 'missing' | 'unparsable'; message: string }
  | { state: 'read'; report: CellReport };

const MESSAGE_CHARS = 1024;

/**
 * The report for the Cell's machine profile in its agent's work: `works` is the ManifestWork
 * group as observed (undefined when Metacontroller did not deliver it), `work` the agent's.
 */
export function observeReport(
  cell: Cell,
  works: readonly ObservedManifestWork[] | undefined,
  work: ObservedManifestWork | undefined,
): ObservedReport {
  if (works === undefined) return { state: 'notObserved' };
  const cluster = cell.spec.managedClusterRef.name;
  const profile = cell.spec.machineProfile.name;
  const configMap = reportConfigMapName(profile);
  const where = `feedback "${FEEDBACK.report}" of ConfigMap ${AGENT_NAMESPACE}/${configMap} in ManifestWork ${cluster}/${AGENT_WORK_NAME}`;
  if (work === undefined) {
    return missing(
      `ManifestWork ${cluster}/${AGENT_WORK_NAME} does not exist yet: the kubecell-delivery controller installs the cell agent on ManagedCluster ${cluster}`,
    );
  }
  const value = feedbackValue(work, configMapMeta(AGENT_NAMESPACE, configMap), FEEDBACK.report);
  if (value === undefined) {
    return missing(
      `the cell agent on ManagedCluster ${cluster} has not reported machine profile ${profile} yet (no ${where}); check Deployment ${AGENT_NAMESPACE}/${AGENT_NAME} there`,
    );
  }
  // Feedback is the managed cluster's word: nothing validated its value.
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
  return { state: 'read', report };
}

function missing(message: string): ObservedReport {
  return { state: 'missing', message: boundMessage(message, MESSAGE_CHARS) };
}

function unparsable(message: string): ObservedReport {
  return { state: 'unparsable', message: boundMessage(message, MESSAGE_CHARS) };
}
