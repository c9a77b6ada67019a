/**
 * The points the idle benchmark (bench/idle.ts) measures: Nodes × VirtualClusters, at a lease
 * period, with or without pod churn. Each point runs in a fresh stack of its own.
 *
 * The lease period is both the ManagedCluster's spec.leaseDurationSeconds and how often the
 * simulated agent renews the lease, as OCM's registration agent does (it renews every
 * leaseDurationSeconds, 60 s when unset: ocm v1.3.1 pkg/registration/spoke/lease/lease_controller.go).
 */

export interface IdlePoint {
  nodes: number;
  virtualClusters: number;
}

export interface IdleCase extends IdlePoint {
  /** spec.leaseDurationSeconds of the ManagedCluster, and the renewal interval. */
  leaseSeconds: number;
  /** Pods created (and as many deleted) per second on the Cell's Nodes; 0: none. */
  churnPerSecond: number;
}

/**
 * Issue 24's idle table in one run: the Node and VirtualCluster dimensions at OCM's default lease
 * (flat bytes per VirtualCluster sync from 50 to 1,000 Nodes and from 10 to 100 VirtualClusters),
 * the largest Cell at a 10-s lease, and pod churn at the default lease. The cheaper points first,
 * so that a run stopped early still has some.
 */
export const IDLE_DEFAULT_CASES: readonly IdleCase[] = Object.freeze([
  { leaseSeconds: 60, churnPerSecond: 0, nodes: 50, virtualClusters: 10 },
  { leaseSeconds: 60, churnPerSecond: 1, nodes: 500, virtualClusters: 10 },
  { leaseSeconds: 60, churnPerSecond: 0, nodes: 1000, virtualClusters: 10 },
  { leaseSeconds: 10, churnPerSecond: 0, nodes: 1000, virtualClusters: 10 },
  { leaseSeconds: 60, churnPerSecond: 0, nodes: 50, virtualClusters: 100 },
]);

/** Sizes crossed with --idle-lease / --idle-churn when no --idle-points are given. */
export const IDLE_DEFAULT_POINTS: readonly IdlePoint[] = Object.freeze([
  { nodes: 50, virtualClusters: 10 },
  { nodes: 1000, virtualClusters: 10 },
  { nodes: 50, virtualClusters: 100 },
]);
export const IDLE_DEFAULT_LEASES: readonly number[] = Object.freeze([60, 10]);
export const IDLE_DEFAULT_CHURN: readonly number[] = Object.freeze([0]);

function pointOf(text: string, what: string): IdlePoint {
  const match = /^\s*(\d+)\s*x\s*(\d+)\s*$/.exec(text);
  const nodes = Number(match?.[1]);
  const virtualClusters = Number(match?.[2]);
  if (!match || nodes <= 0 || virtualClusters <= 0)
    throw new Error(`${what}: ${text} is not <nodes>x<virtualclusters>, both above 0`);
  return { nodes, virtualClusters };
}

/** "500x100,50x10" → points. */
export function parsePoints(text: string): IdlePoint[] {
  return listOf(text, '--idle-points').map((part) => pointOf(part, '--idle-points'));
}

/** "60,10" → lease periods (whole seconds above 0). */
export function parseLeases(text: string, what = '--idle-lease'): number[] {
  return listOf(text, what).map((part) => {
    const value = Number(part);
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new Error(`${what}: ${part} is not a whole number of seconds above 0`);
    return value;
  });
}

/** "0,1" → pods per second (0: no churn). */
export function parseChurn(text: string, what = '--idle-churn'): number[] {
  return listOf(text, what).map((part) => {
    const value = Number(part);
    if (!Number.isFinite(value) || value < 0 || value > 20)
      throw new Error(`${what}: ${part} is not a number of pods per second from 0 to 20`);
    return value;
  });
}

/** "60:0:50x10,10:1:1000x10" → cases (`<lease s>:<churn pods/s>:<nodes>x<virtualclusters>`). */
export function parseCases(text: string): IdleCase[] {
  return listOf(text, '--idle-cases').map((part) => {
    const fields = part.split(':');
    if (fields.length !== 3)
      throw new Error(
        `--idle-cases: ${part}: expected <lease seconds>:<churn pods per second>:<nodes>x<virtualclusters>, e.g. 60:0:50x10`,
      );
    const [lease = '', churn = '', point = ''] = fields;
    try {
      return {
        leaseSeconds: parseLeases(lease, 'the lease')[0] ?? 0,
        churnPerSecond: parseChurn(churn, 'the churn')[0] ?? 0,
        ...pointOf(point, 'the point'),
      };
    } catch (error) {
      throw new Error(`--idle-cases: ${part}: ${(error as Error).message}`, { cause: error });
    }
  });
}

/** Every point at every lease period and churn rate. */
export function casesOf(
  points: readonly IdlePoint[],
  leases: readonly number[],
  churn: readonly number[],
): IdleCase[] {
  return points.flatMap((point) =>
    leases.flatMap((leaseSeconds) =>
      churn.map((churnPerSecond) => ({ ...point, leaseSeconds, churnPerSecond })),
    ),
  );
}

/** Every combination of the Node counts and VirtualCluster counts. */
export function pointsOf(nodes: number[], virtualClusters: number[]): IdlePoint[] {
  return nodes.flatMap((n) => virtualClusters.map((m) => ({ nodes: n, virtualClusters: m })));
}

/** `lease 60 s, churn 1/s, 500 Nodes × 10 VCs` */
export function caseName(c: IdleCase): string {
  return `lease ${c.leaseSeconds} s, churn ${c.churnPerSecond ? `${c.churnPerSecond}/s` : 'none'}, ${c.nodes} Nodes × ${c.virtualClusters} VCs`;
}

function listOf(text: string, what: string): string[] {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0)
    throw new Error(`${what}: expected a list separated by commas, got "${text}"`);
  return parts;
}

// --- the idle part's command line (bench/run.ts) ---

export interface IdleArgs {
  cases?: string;
  points?: string;
  nodes?: string;
  vcs?: string;
  lease?: string;
  churn?: string;
  window?: string;
  quiet?: string;
  settleMax?: string;
  readyTimeout?: string;
  label?: string;
}

/** Each option: its flag and the environment variable it may come from instead. */
export const IDLE_FLAGS: Readonly<Record<string, { key: keyof IdleArgs; env: string }>> = {
  '--idle-cases': { key: 'cases', env: 'KUBECELL_BENCH_IDLE_CASES' },
  '--idle-points': { key: 'points', env: 'KUBECELL_BENCH_IDLE_POINTS' },
  '--idle-nodes': { key: 'nodes', env: 'KUBECELL_BENCH_IDLE_NODES' },
  '--idle-vcs': { key: 'vcs', env: 'KUBECELL_BENCH_IDLE_VCS' },
  '--idle-lease': { key: 'lease', env: 'KUBECELL_BENCH_IDLE_LEASE' },
  '--idle-churn': { key: 'churn', env: 'KUBECELL_BENCH_IDLE_CHURN' },
  '--idle-window': { key: 'window', env: 'KUBECELL_BENCH_IDLE_WINDOW' },
  '--idle-quiet': { key: 'quiet', env: 'KUBECELL_BENCH_IDLE_QUIET' },
  '--idle-settle-max': { key: 'settleMax', env: 'KUBECELL_BENCH_IDLE_SETTLE_MAX' },
  '--idle-ready-timeout': { key: 'readyTimeout', env: 'KUBECELL_BENCH_IDLE_READY_TIMEOUT' },
  '--idle-label': { key: 'label', env: 'KUBECELL_BENCH_IDLE_LABEL' },
};

/** The options set in the environment (flags override them). */
export function idleArgsFromEnvironment(env: NodeJS.ProcessEnv): IdleArgs {
  const args: IdleArgs = {};
  for (const { key, env: name } of Object.values(IDLE_FLAGS)) {
    const value = env[name];
    if (value) args[key] = value;
  }
  return args;
}

function counts(text: string, what: string): number[] {
  return listOf(text, what).map((part) => {
    const value = Number(part);
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new Error(`${what}: ${part} is not a whole number above 0`);
    return value;
  });
}

/**
 * The points to run: --idle-cases as given; else the points (--idle-points, or --idle-nodes ×
 * --idle-vcs, or IDLE_DEFAULT_POINTS) at every --idle-lease and --idle-churn when any of these is
 * given; else issue 24's table (IDLE_DEFAULT_CASES), or one small point with --quick.
 */
export function idleCasesOf(args: IdleArgs, quick: boolean): IdleCase[] {
  if (args.cases !== undefined) {
    if ([args.points, args.nodes, args.vcs, args.lease, args.churn].some((v) => v !== undefined))
      throw new Error(
        '--idle-cases names every point in full: leave out --idle-points, --idle-nodes, --idle-vcs, --idle-lease and --idle-churn',
      );
    return parseCases(args.cases);
  }
  const crossed = [args.points, args.nodes, args.vcs, args.lease, args.churn].some(
    (v) => v !== undefined,
  );
  if (!crossed)
    return quick
      ? [{ leaseSeconds: 10, churnPerSecond: 1, nodes: 20, virtualClusters: 3 }]
      : [...IDLE_DEFAULT_CASES];
  const points =
    args.points !== undefined
      ? parsePoints(args.points)
      : args.nodes !== undefined || args.vcs !== undefined
        ? pointsOf(
            counts(args.nodes ?? '500', '--idle-nodes'),
            counts(args.vcs ?? '100', '--idle-vcs'),
          )
        : [...IDLE_DEFAULT_POINTS];
  return casesOf(
    points,
    args.lease !== undefined ? parseLeases(args.lease) : IDLE_DEFAULT_LEASES,
    args.churn !== undefined ? parseChurn(args.churn) : IDLE_DEFAULT_CHURN,
  );
}
