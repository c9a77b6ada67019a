/**
 * What the idle benchmark (bench/idle.ts) sees change, and what each VirtualCluster sync followed.
 *
 * Watches on every kind a VirtualCluster relates to or owns (and the Cell's Lease) record each
 * change with the paths that changed; the hook server's log gives each call's time and parent.
 * Each VirtualCluster sync is put down to the latest change before it: an attribution by timing,
 * since Metacontroller records no cause (its related-object handler enqueues the parents silently,
 * pkg/controller/common/customize/manager.go) and its queue merges triggers.
 */
import { readFileSync } from 'node:fs';
import type { KubeObject } from '../harness/simulate/index.js';
import { Watch, type AdminConnection } from './watch.js';
import { round } from './stats.js';

export interface Attribution {
  /** How VirtualCluster syncs are told apart: the latest change before each sync started. */
  method: string;
  /** Changes seen by the watches in the window, by kind. */
  changes: Record<string, number>;
  /** Writes in the window, by kind: the paths that changed, and in how many writes. */
  changedPaths: Record<string, Record<string, number>>;
  /** Cell writes in the window by what they changed (see cellWriteKind). */
  cellWrites: Record<string, number>;
  /** VirtualCluster syncs by the change that preceded them. */
  virtualClusterSyncsAfter: Record<string, number>;
  /** VirtualCluster syncs per change of each kind (fan-out). */
  virtualClusterSyncsPerChange: Record<string, number>;
  /** Per lease cycle (from one renewal to the next): VirtualCluster syncs, mean. */
  virtualClusterSyncsPerLeaseCycle?: number;
  /** Per 10 s of the quiet window (no renewal): VirtualCluster syncs, mean. */
  virtualClusterSyncsPer10sQuiet?: number;
  /** Median seconds from the change to the sync it is attributed to. */
  medianLagSeconds?: number;
}

const CELL_LEASE = 'a Cell status write with a new lease renewal time';
const CELL_TIMES = 'a Cell status write of observation times only';
const CELL_OTHER = 'another Cell write';

/** What a Cell write changed: the lease renewal time, only observation times, or more. */
export function cellWriteKind(paths: readonly string[]): string {
  if (paths.some((path) => path.includes('leaseRenewTime'))) return CELL_LEASE;
  if (paths.length > 0 && paths.every((path) => path.endsWith('observedAt'))) return CELL_TIMES;
  return CELL_OTHER;
}
/** A VirtualCluster sync with no change this long before it is counted as unprompted. */
const ATTRIBUTION_MAX_LAG_SECONDS = 5;

// --- watches: what changed, and when ---

export interface Change {
  at: number;
  kind: string;
  namespace: string;
  name: string;
  /** Paths that changed (normalised: Node names as <node>, list items by type or index). */
  paths: string[];
}

const IGNORED_METADATA = new Set(['resourceVersion', 'managedFields', 'generation']);

/** The leaf paths at which two JSON values differ, normalised for counting. */
export function changedPaths(
  before: unknown,
  after: unknown,
  nodeNames: ReadonlySet<string>,
  prefix = '',
  depth = 0,
): string[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (depth >= 6) return [prefix || '.'];
  if (Array.isArray(before) && Array.isArray(after)) {
    // List items by their type (conditions), else by name (a Node's as <node>, others as *).
    const keyOf = (item: unknown, index: number) =>
      isObject(item) && typeof item.type === 'string'
        ? item.type
        : isObject(item) && typeof item.name === 'string'
          ? `${nodeNames.has(item.name) ? '<node>' : '*'}=${item.name}`
          : String(index);
    const label = (key: string) => key.replace(/=.*$/s, '');
    const left = new Map(before.map((item, index) => [keyOf(item, index), item]));
    const right = new Map(after.map((item, index) => [keyOf(item, index), item]));
    const keys = new Set([...left.keys(), ...right.keys()]);
    return [
      ...new Set(
        [...keys].flatMap((key) =>
          changedPaths(
            left.get(key),
            right.get(key),
            nodeNames,
            `${prefix}[${label(key)}]`,
            depth + 1,
          ),
        ),
      ),
    ];
  }
  if (isObject(before) && isObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    const paths: string[] = [];
    for (const key of keys) {
      if (prefix === 'metadata' && IGNORED_METADATA.has(key)) continue;
      const label = nodeNames.has(key) ? '<node>' : key;
      paths.push(
        ...changedPaths(
          before[key],
          after[key],
          nodeNames,
          prefix === '' ? label : `${prefix}.${label}`,
          depth + 1,
        ),
      );
    }
    return paths;
  }
  return [prefix || '.'];
}

/** Records the changes of every kind a VirtualCluster or the Cell relates to. */
export class ChangeLog {
  readonly changes: Change[] = [];
  private readonly objects = new Map<string, unknown>();
  private readonly watches: Watch[] = [];
  readonly nodeNames = new Set<string>();

  constructor(
    private readonly connection: AdminConnection,
    /** The Cell's namespace, and the namespace of its ManagedCluster's Lease. */
    private readonly where: { cellNamespace: string; leaseNamespace: string },
    private readonly log: (line: string) => void,
    /** What to watch, as [kind, path]; by default what one local Cell's VirtualClusters relate to. */
    private readonly watched?: [string, string][],
  ) {}

  start(): void {
    const specs: [string, string][] = this.watched ?? [
      ['Lease', `/apis/coordination.k8s.io/v1/namespaces/${this.where.leaseNamespace}/leases`],
      ['ManagedCluster', '/apis/cluster.open-cluster-management.io/v1/managedclusters'],
      ['Cell', `/apis/kubecell.io/v1alpha1/namespaces/${this.where.cellNamespace}/cells`],
      // The Cell's liveness record, which a resolved VirtualCluster relates instead of the Cell.
      ['ConfigMap', `/api/v1/namespaces/${this.where.cellNamespace}/configmaps`],
      ['Node', '/api/v1/nodes'],
      ['VirtualCluster', '/apis/kubecell.io/v1alpha1/virtualclusters'],
      ['VirtualNodeClass', '/apis/kubecell.io/v1alpha1/virtualnodeclasses'],
      ['Namespace', '/api/v1/namespaces'],
      ['k3k Cluster', '/apis/k3k.io/v1beta1/clusters'],
      ['ResourceQuota', '/api/v1/resourcequotas'],
      ['Service', '/api/v1/services'],
    ];
    for (const [kind, path] of specs) {
      const watch = new Watch(
        this.connection,
        path,
        (type, object, at) => this.record(kind, type, object, at),
        this.log,
      );
      watch.start();
      this.watches.push(watch);
    }
  }

  private record(kind: string, type: string, object: KubeObject, at: number): void {
    const namespace = object.metadata.namespace ?? '';
    const key = `${kind}/${namespace}/${object.metadata.name}`;
    if (kind === 'Node') this.nodeNames.add(object.metadata.name);
    const previous = this.objects.get(key) as KubeObject | undefined;
    if (type === 'DELETED') {
      this.objects.delete(key);
      this.changes.push({ at, kind, namespace, name: object.metadata.name, paths: ['(deleted)'] });
      return;
    }
    this.objects.set(key, object);
    if (previous === undefined) {
      this.changes.push({ at, kind, namespace, name: object.metadata.name, paths: ['(added)'] });
      return;
    }
    // A restarted watch replays what it has as ADDED: not a change.
    if (previous.metadata.resourceVersion === object.metadata.resourceVersion) return;
    this.changes.push({
      at,
      kind,
      namespace,
      name: object.metadata.name,
      paths: changedPaths(previous, object, this.nodeNames),
    });
  }

  between(from: number, to: number): Change[] {
    return this.changes.filter((change) => change.at >= from && change.at < to);
  }

  stop(): void {
    for (const watch of this.watches) watch.stop();
  }
}

export interface HookCallLine {
  at: number;
  start: number;
  controller: string;
  hook: string;
  namespace: string;
  name: string;
}

/** The hook calls the hook server logged after byte `from` of its log (one JSON line each). */
export function hookCallLines(logFile: string, from: number): HookCallLine[] {
  const calls: HookCallLine[] = [];
  for (const line of readFileSync(logFile).subarray(from).toString('utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: {
      timestamp?: string;
      msg?: string;
      controller?: string;
      hook?: string;
      durationMs?: number;
      parent?: { namespace?: string; name?: string };
    };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.msg !== 'hook call' || !entry.timestamp) continue;
    const at = Date.parse(entry.timestamp);
    calls.push({
      at,
      start: at - (entry.durationMs ?? 0),
      controller: entry.controller ?? '',
      hook: entry.hook ?? '',
      namespace: entry.parent?.namespace ?? '',
      name: entry.parent?.name ?? '',
    });
  }
  return calls;
}

/** What a VirtualCluster's sync is re-run for: the kinds it relates to and its children. */
const VC_TRIGGERS = new Set([
  'Cell',
  'ConfigMap',
  // A VirtualCluster on a remote Cell relates to its ManifestWork (bench/remote.ts).
  'ManifestWork',
  'Node',
  'VirtualCluster',
  'VirtualNodeClass',
  'Namespace',
  'k3k Cluster',
  'ResourceQuota',
  'Service',
]);

export function attribute(
  changes: Change[],
  syncs: HookCallLine[],
  window: { from: number; to: number },
  quiet?: { from: number; to: number; syncs: number },
): Attribution {
  const inWindow = changes.filter((c) => c.at >= window.from && c.at < window.to);
  const changeCounts: Record<string, number> = {};
  for (const change of inWindow) changeCounts[change.kind] = (changeCounts[change.kind] ?? 0) + 1;

  const leases = inWindow.filter((c) => c.kind === 'Lease').map((c) => c.at);
  const cellWrites: Record<string, number> = {};
  for (const write of inWindow.filter((c) => c.kind === 'Cell')) {
    const kind = cellWriteKind(write.paths);
    cellWrites[kind] = (cellWrites[kind] ?? 0) + 1;
  }
  const pathsByKind: Record<string, Record<string, number>> = {};
  for (const write of inWindow) {
    const paths = (pathsByKind[write.kind] ??= {});
    for (const path of new Set(write.paths)) paths[path] = (paths[path] ?? 0) + 1;
  }

  // Every trigger from a little before the window on, so the first syncs find their cause.
  const triggers = changes
    .filter(
      (c) =>
        VC_TRIGGERS.has(c.kind) &&
        c.at >= window.from - ATTRIBUTION_MAX_LAG_SECONDS * 1000 &&
        c.at < window.to,
    )
    .sort((a, b) => a.at - b.at);
  const categoryOf = (change: Change, sync: HookCallLine): string => {
    if (change.kind === 'Cell') return cellWriteKind(change.paths);
    if (change.kind === 'VirtualCluster')
      return change.namespace === sync.namespace && change.name === sync.name
        ? 'its own VirtualCluster write'
        : 'a sibling VirtualCluster write';
    return `a ${change.kind} change`;
  };
  const after: Record<string, number> = {};
  const lags: number[] = [];
  const windowSyncs = syncs.filter((s) => s.start >= window.from && s.start < window.to);
  for (const sync of windowSyncs) {
    let cause: Change | undefined;
    for (const change of triggers) {
      if (change.at > sync.start) break;
      cause = change;
    }
    let category: string;
    if (!cause || sync.start - cause.at > ATTRIBUTION_MAX_LAG_SECONDS * 1000) {
      category = `no change in the ${ATTRIBUTION_MAX_LAG_SECONDS} s before (a resync)`;
    } else {
      category = categoryOf(cause, sync);
      lags.push(sync.start - cause.at);
    }
    after[category] = (after[category] ?? 0) + 1;
  }
  const perChange: Record<string, number> = {};
  const denominators: Record<string, number> = cellWrites;
  for (const [category, count] of Object.entries(after)) {
    const kind = /^a (.+) change$/.exec(category)?.[1];
    const denominator =
      denominators[category] ??
      (kind !== undefined
        ? changeCounts[kind]
        : category === 'a sibling VirtualCluster write' ||
            category === 'its own VirtualCluster write'
          ? changeCounts.VirtualCluster
          : undefined);
    if (denominator) perChange[category] = round(count / denominator, 2);
  }

  let perLeaseCycle: number | undefined;
  if (leases.length >= 2) {
    const first = leases[0] ?? 0;
    const last = leases[leases.length - 1] ?? 0;
    const inCycles = windowSyncs.filter((s) => s.start >= first && s.start < last).length;
    perLeaseCycle = round(inCycles / (leases.length - 1), 1);
  }
  lags.sort((a, b) => a - b);
  return {
    method: `each VirtualCluster sync (its start: the hook server's log line time minus its duration) is put down to the latest change, seen on a watch, of a kind a VirtualCluster relates to or owns, at most ${ATTRIBUTION_MAX_LAG_SECONDS} s before; a Cell write is told apart by what it changed (the lease renewal time; only observation times; more). Metacontroller's queue merges triggers and delays syncs, so this is an attribution by timing, not a trace.`,
    changes: changeCounts,
    changedPaths: Object.fromEntries(
      Object.entries(pathsByKind).map(([kind, paths]) => [
        kind,
        Object.fromEntries(
          Object.entries(paths)
            .sort(([, a], [, b]) => b - a)
            .slice(0, 12),
        ),
      ]),
    ),
    cellWrites,
    virtualClusterSyncsAfter: after,
    virtualClusterSyncsPerChange: perChange,
    ...(perLeaseCycle === undefined ? {} : { virtualClusterSyncsPerLeaseCycle: perLeaseCycle }),
    ...(quiet
      ? {
          virtualClusterSyncsPer10sQuiet: round(
            (quiet.syncs / ((quiet.to - quiet.from) / 1000)) * 10,
            1,
          ),
        }
      : {}),
    ...(lags.length > 0
      ? { medianLagSeconds: round((lags[Math.floor(lags.length / 2)] ?? 0) / 1000, 2) }
      : {}),
  };
}
