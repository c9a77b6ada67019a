/**
 * results.md: Metacontroller's requests per VirtualCluster by verb and resource, from the
 * apiserver's audit log (bench/audit-log.ts), one column per flag set and wave. Runs before the
 * audit log was recorded have no such figures; the section is then left out.
 */
import type { MetacontrollerResult, WaveResult } from './metacontroller.js';

type Audited = NonNullable<WaveResult['auditRequests']>;

interface Column {
  title: string;
  virtualClusters: number;
  audit: Audited;
}

function columnsOf(result: MetacontrollerResult): Column[] {
  return result.flagSets.flatMap((set) =>
    set.waves.flatMap((wave) =>
      wave.auditRequests
        ? [
            {
              title: `${set.name}, ${wave.virtualClusters} VC`,
              virtualClusters: wave.virtualClusters,
              audit: wave.auditRequests,
            },
          ]
        : [],
    ),
  );
}

/** A count per VirtualCluster: whole numbers as such, else two decimals. */
function each(count: number | undefined): string {
  if (count === undefined) return '–';
  return Number.isInteger(count) ? String(count) : count.toFixed(2);
}

function counted(counts: Record<string, number>, virtualClusters: number): string {
  return Object.entries(counts)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([key, count]) => `${key} ${each(Math.round((count / virtualClusters) * 100) / 100)}`)
    .join(', ');
}

export function auditMarkdown(result: MetacontrollerResult): string[] {
  const columns = columnsOf(result);
  if (columns.length === 0) return [];
  // Rows by the sum over the columns of their count per VirtualCluster, most first.
  const weight = new Map<string, number>();
  for (const column of columns) {
    for (const [key, count] of Object.entries(column.audit.perVirtualCluster))
      weight.set(key, (weight.get(key) ?? 0) + count);
  }
  const rows = [...weight.entries()]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([key]) => key);
  const cells = (pick: (column: Column) => string) => columns.map(pick).join(' | ');
  const lines = [
    "### Metacontroller's API requests per VirtualCluster, from the apiserver's audit log (apply → all Ready)",
    '',
    `The requests of ${result.auditedUser ? `\`${result.auditedUser}\`` : 'Metacontroller’s ServiceAccount'} the apiserver received from the first create sent until the last VirtualCluster was Ready, by verb and resource (API group left out for the core group and kubecell.io; a request for no resource, API discovery, by its path), divided by the wave’s VirtualClusters. The audit policy logs each request once, when its response is complete (level Metadata): a watch is logged only when it ends, so one still open when the log is read is not counted. Sorted by the sum over the columns.`,
    '',
    `| Request | ${cells((column) => column.title)} |`,
    `| --- | ${cells(() => '---')} |`,
    ...rows.map(
      (key) => `| ${key} | ${cells((column) => each(column.audit.perVirtualCluster[key]))} |`,
    ),
    `| **All** (in the wave) | ${cells(
      (column) =>
        `**${each(Math.round((column.audit.total / column.virtualClusters) * 100) / 100)}** (${column.audit.total})`,
    )} |`,
    `| By response code | ${cells((column) => counted(column.audit.byCodeClass, column.virtualClusters))} |`,
    `| Not answered with 2xx | ${cells((column) => counted(column.audit.notOk, column.virtualClusters) || '–')} |`,
    '',
  ];
  return lines;
}
