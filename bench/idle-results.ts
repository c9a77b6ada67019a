/**
 * What the idle benchmark (bench/idle.ts) is given and what it keeps in results.json. Runs before
 * issue 24 are kept there as history: they had one lease setting for every point, no pod churn and
 * no Metacontroller restart (`steadyState` absent), and their points lack the fields marked so.
 */
import type { ChurnFigures } from './idle-churn.js';
import type { Attribution } from './idle-changes.js';
import type { IdleCase, IdlePoint } from './idle-cases.js';
import type { ControllerCost, StoredCell, WindowFigures } from './idle-metrics.js';
import type { FlagSetResult } from './metacontroller.js';

export interface IdleOptions {
  cases: IdleCase[];
  windowSeconds: number;
  /** 0: no quiet window; skipped at a point whose lease would go stale during it. */
  quietSeconds: number;
  sliceSeconds: number;
  settleMaxSeconds: number;
  /** Longest wait for every VirtualCluster to be Ready; then the point is measured anyway. */
  readyTimeoutSeconds: number;
  k3kIntervalMs: number;
  /** Pods the churn keeps alive. */
  churnKeep: number;
  /** The key of this run in results.json's idle part. */
  label: string;
  log: (line: string) => void;
}

export interface StoredSizes extends StoredCell {
  /** One profile Node (mean), and the share of its managedFields. */
  nodeBytes: number;
  nodeManagedFieldsBytes: number;
  /** One VirtualCluster (mean), and the share of its managedFields. */
  virtualClusterBytes: number;
  virtualClusterManagedFieldsBytes: number;
  /**
   * What a VirtualCluster sync request carried before issue 14, estimated from the objects as
   * stored: the Cell, every profile Node, every VirtualCluster of the Cell.
   */
  virtualClusterRequestEstimate: {
    cellBytes: number;
    nodesBytes: number;
    virtualClustersBytes: number;
    managedFieldsBytes: number;
  };
}

export interface QuietFigures {
  seconds: number;
  /** From pausing the renewals until Metacontroller's Cell and VirtualCluster queues were empty. */
  drainSeconds: number;
  virtualClusterSyncsPerVirtualClusterPerMinute: number;
  cellSyncsPerCellPerMinute: number;
  /** Cell writes seen on the watch. */
  cellWrites: number;
  perController: Record<string, ControllerCost>;
  cpuSecondsPerMinute: Record<string, number>;
}

/** Writes seen on the watches in the window (each a new resourceVersion). */
export interface CellWriteFigures {
  /** Writes that changed the Cell's status. */
  status: number;
  statusPerMinute: number;
  /** Every write of the Cell (status, metadata, spec). */
  total: number;
  /** Writes of the Cell's liveness record (the ConfigMap resolved VirtualClusters relate). */
  livenessRecord: number;
}

export interface IdlePointResult extends IdlePoint {
  /** The lease period of this point (absent before issue 24: see IdleResult.setup). */
  leaseSeconds?: number;
  /** Pods created and deleted per second in the window (absent before issue 24: none). */
  churnPerSecond?: number;
  /** Set when the point failed; the other figures may then be missing. */
  error?: string;
  seconds: {
    stackStart: number;
    /** Cell applied → Cell Ready (the N Nodes registered meanwhile). */
    cellReady: number;
    /** First namespace applied → all M VirtualClusters Ready. */
    virtualClustersReady: number;
    /** Metacontroller stopped → started again and ready (absent before issue 24). */
    restart?: number;
    settle: number;
    window: number;
    quiet: number;
    /** The whole point, stack start to stop. */
    total: number;
  };
  /** Set when not every VirtualCluster was Ready within readyTimeoutSeconds: the phases then. */
  notAllReady?: string;
  /** Two slices in a row agreed before settleMaxSeconds. */
  settled: boolean;
  /** VirtualCluster syncs per VirtualCluster per minute in each slice of the convergence wait. */
  settleSlices: number[];
  window?: WindowFigures;
  cellWrites?: CellWriteFigures;
  churn?: ChurnFigures;
  quiet?: QuietFigures;
  /** Why the quiet window was not measured at this point. */
  quietSkipped?: string;
  /**
   * After the windows, one VirtualCluster annotated (a change it must be synced for): the
   * virtualcluster/sync requests that followed within 5 s of the first, and their mean size.
   * The request size when a quiet cluster syncs no VirtualCluster at all.
   */
  probe?: { syncs: number; meanBytes: number } | { error: string };
  /**
   * The same probe on a VirtualCluster that chose its Cell by `spec.cellSelector` (every other
   * one does, issue 29); absent in runs before they existed, or with one VirtualCluster.
   */
  probeSelector?: { syncs: number; meanBytes: number } | { error: string };
  stored?: StoredSizes;
  attribution?: Attribution;
  /** The hook server's code as it ran: uncommitted changes under hooks/ at the point's start. */
  hooksUncommitted: string[];
}

export interface IdleResult {
  measured: boolean;
  label: string;
  date: string;
  gitCommit?: string;
  metacontrollerVersion: string;
  metacontrollerArgs: string[];
  /** What Metacontroller logged it ran with ("Configuration information"). */
  effective?: FlagSetResult['effective'];
  /**
   * How the steady state was reached (from issue 24 on: Metacontroller restarted once every
   * VirtualCluster was Ready); absent in older runs, which measured the rules cached before.
   */
  steadyState?: string;
  setup: Pick<
    IdleOptions,
    | 'windowSeconds'
    | 'quietSeconds'
    | 'sliceSeconds'
    | 'settleMaxSeconds'
    | 'readyTimeoutSeconds'
    | 'k3kIntervalMs'
  > & {
    /** Runs before issue 24: one renewal interval and lease duration for every point. */
    leaseRenewSeconds?: number;
    leaseDurationSeconds?: number;
    /** From issue 24 on. */
    churnKeep?: number;
    classEntitlement: Record<string, string>;
    nodeCapacity: string;
  };
  points: IdlePointResult[];
}

/** The runs of the idle part in results.json, by label (`before`, `after`, `issue 24`). */
export type IdleResults = Record<string, IdleResult>;
