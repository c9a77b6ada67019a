/**
 * One report per machine profile (decision D34), computed with the Cell controller's own
 * functions (cell/cluster-report.ts over cell/observe.ts's `observeCluster`), written into
 * ConfigMap AGENT_NAMESPACE/kubecell-cell-report-<profile> (the agent's work creates it empty),
 * key `report`, only when it says something new or its heartbeat is due: an unchanged report is
 * rewritten every REPORT_HEARTBEAT_SECONDS so the hub can tell a quiet cluster from a silent
 * agent (it counts a report older than 600 s as outdated), and not more often.
 */
import { HEARTBEAT_SECONDS } from '../cell/publication.js';
import { clusterReport } from '../cell/cluster-report.js';
import type { CellControllerConfig } from '../cell/config.js';
import { observeCluster } from '../cell/observe.js';
import type { ObjectMap } from '../metacontroller/protocol.js';
import { AGENT_NAMESPACE, REPORT_KEY, reportConfigMapName } from '../remote/contract.js';
import {
  parseCellReport,
  sameReportContent,
  serializeCellReport,
  type CellReport,
} from '../remote/report.js';
import type { AgentApi } from './kube-api.js';
import { readConfigMap, writeConfigMap, type ConfigMapObject, type WriteOutcome } from './write.js';

/** Longest an unchanged report keeps its observedAt: the Cell's own heartbeat. */
export const REPORT_HEARTBEAT_SECONDS = HEARTBEAT_SECONDS;

/** The report of each profile, from what one pass read. */
export function computeReports(
  related: ObjectMap,
  profiles: readonly string[],
  config: CellControllerConfig,
  now: Date,
): CellReport[] {
  return profiles.map((profile) =>
    clusterReport(profile, observeCluster(related, profile, config), now),
  );
}

/** The report the ConfigMap holds, if it holds one that parses. */
function previousReport(configMap: ConfigMapObject | undefined): CellReport | undefined {
  const text = configMap?.data?.[REPORT_KEY];
  if (text === undefined) return undefined;
  try {
    return parseCellReport(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether `next` must be written over `previous`: no readable previous report, another content,
 * or a previous observedAt REPORT_HEARTBEAT_SECONDS old or more (or in the future: a clock that
 * went back must not freeze the heartbeat).
 */
export function reportDue(previous: CellReport | undefined, next: CellReport, now: Date): boolean {
  if (!previous || !sameReportContent(previous, next)) return true;
  const age = now.getTime() - Date.parse(previous.observedAt);
  return !(age >= 0 && age < REPORT_HEARTBEAT_SECONDS * 1000);
}

/** Writes `report` when due; `unchanged` otherwise. */
export async function publishReport(
  api: AgentApi,
  report: CellReport,
  now: Date,
): Promise<WriteOutcome> {
  const name = reportConfigMapName(report.machineProfile);
  const existing = await readConfigMap(api, AGENT_NAMESPACE, name);
  if (existing && !reportDue(previousReport(existing), report, now)) return 'unchanged';
  return writeConfigMap(
    api,
    { namespace: AGENT_NAMESPACE, name, data: { [REPORT_KEY]: serializeCellReport(report) } },
    existing,
  );
}
