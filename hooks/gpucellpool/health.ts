/**
 * Cell health, a pure judgement after Cluster API's MachineHealthCheck (kubernetes-sigs/cluster-api
 * v1.14.0, core/reconcilers/machinehealthcheck/machinehealthcheck_targets.go `needsRemediation`,
 * machinehealthcheck_controller.go `isAllowedRemediation`):
 *
 * - A cell is Unhealthy when its machine failed (MachineFailed: a Cluster API Machine in phase
 *   Failed or with a deprecated.v1beta1.failureReason, a KubeVirt VirtualMachine in
 *   CrashLoopBackOff); when its Node had joined and is gone while the machine remains
 *   (NodeDeleted); when its Node has held a condition of spec.health.unhealthyConditions for the
 *   condition's duration, counted from its lastTransitionTime (UnhealthyNode); or when its machine
 *   has run nodeStartupTimeoutSeconds without a Node (NodeStartupTimeout). First match wins.
 * - The startup clock starts when the machine runs: the VirtualMachine's Ready condition (KubeVirt
 *   copies it from the VirtualMachineInstance) or the Machine's InfrastructureReady condition
 *   turning True, else its creation once its status says it runs. Cluster API also counts from
 *   the creation of a Machine whose infrastructure is not ready; the pool does not, so that a
 *   replacement waiting for the GPU of the cell it replaces is not timed out.
 * - A condition without a lastTransitionTime cannot be timed: it counts only where its duration
 *   is 0 (Cluster API would count it from Go's zero time, at once: too quick to retire a GPU
 *   cell on).
 * - Each verdict says when it next falls due without any other change (`nextCheck`): the sync
 *   asks for a resync then, so a cell is found unhealthy within its duration and one resync, with
 *   no timer of its own.
 * - maxUnhealthy: a count, or a percentage of the pool's cells rounded down (Cluster API's
 *   `GetScaledValueFromIntOrPercent(..., false)`), but at least 1 for a percentage above 0, so that
 *   the one cell of a small pool can be replaced. With more cells unhealthy than that, nothing
 *   more is remediated (RemediationAllowed False, TooManyUnhealthy).
 */
import type { GPUCellPool } from '../generated/types/index.js';
import { formatTime } from '../status/conditions.js';
import { DEFAULT_UNHEALTHY_CONDITIONS, SPEC_DEFAULTS, type CellHealthState } from './constants.js';
import type { MachineObject, NodeObject, TimedCondition } from './objects.js';
import { CELL_HEALTH_REASONS, REMEDIATION_REASONS, type CellHealthReason } from './reasons.js';

type HealthSpec = NonNullable<GPUCellPool['spec']['health']>;
export type UnhealthyCondition = NonNullable<HealthSpec['unhealthyConditions']>[number];

/** spec.health with its defaults. */
export interface HealthPolicy {
  unhealthyConditions: readonly UnhealthyCondition[];
  nodeStartupTimeoutSeconds: number;
  maxUnhealthy: number | string;
  remediation: 'Replace' | 'None';
  /** Unset: wait for the GPU to be released. */
  releaseTimeoutSeconds?: number;
}

export function healthPolicy(pool: GPUCellPool): HealthPolicy {
  const health = pool.spec.health ?? {};
  return {
    unhealthyConditions: health.unhealthyConditions ?? DEFAULT_UNHEALTHY_CONDITIONS,
    nodeStartupTimeoutSeconds:
      health.nodeStartupTimeoutSeconds ?? SPEC_DEFAULTS.nodeStartupTimeoutSeconds,
    maxUnhealthy: health.maxUnhealthy ?? SPEC_DEFAULTS.maxUnhealthy,
    remediation: health.remediation ?? SPEC_DEFAULTS.remediation,
    ...(health.releaseTimeoutSeconds !== undefined
      ? { releaseTimeoutSeconds: health.releaseTimeoutSeconds }
      : {}),
  };
}

/** A cell's health as status.cells[] records it. */
export interface RecordedHealth {
  health: CellHealthState;
  reason: CellHealthReason;
  /** RFC 3339. */
  since: string;
}

/** A cell's health after this sync. */
export interface CellHealth extends RecordedHealth {
  /** What the CellsHealthy message says of a cell that is not Healthy. */
  detail?: string;
  /** Remediating: spec.health.releaseTimeoutSeconds has passed, the GPU is not waited for. */
  releaseDue?: boolean;
}

/** What one cell's health is judged from. */
export interface CellObservation {
  provisioner: GPUCellPool['spec']['provisioner']['type'];
  machine?: MachineObject | undefined;
  /** The cell's current Node. */
  node?: NodeObject | undefined;
  /** The status recorded a Node for this incarnation, and no current Node is seen now. */
  nodeLost: boolean;
}

export interface HealthVerdict {
  health: 'Healthy' | 'Unhealthy';
  reason: CellHealthReason;
  /** When the verdict became true, where that follows from what is observed. */
  since?: Date;
  /** What the CellsHealthy message says of an unhealthy cell. */
  detail?: string;
  /** When this verdict may next change with nothing else changing. */
  nextCheck?: Date;
}

export function judgeCell(cell: CellObservation, policy: HealthPolicy, now: Date): HealthVerdict {
  const { machine, node } = cell;
  const failure = machine && machineFailure(machine, cell.provisioner);
  if (failure !== undefined) return unhealthy(CELL_HEALTH_REASONS.MachineFailed, failure);
  if (node !== undefined) return judgeNode(node, policy.unhealthyConditions, now);
  if (machine === undefined) return { health: 'Healthy', reason: CELL_HEALTH_REASONS.Starting };
  if (cell.nodeLost) {
    return unhealthy(
      CELL_HEALTH_REASONS.NodeDeleted,
      `its Node is gone while ${machine.metadata.name} remains`,
    );
  }
  return judgeStartup(machine, cell.provisioner, policy.nodeStartupTimeoutSeconds, now);
}

function unhealthy(reason: CellHealthReason, detail: string, since?: Date): HealthVerdict {
  return { health: 'Unhealthy', reason, detail, ...(since ? { since } : {}) };
}

/** The first unhealthy condition (by when it became so, then by spec order), or when one may be. */
function judgeNode(
  node: NodeObject,
  rules: readonly UnhealthyCondition[],
  now: Date,
): HealthVerdict {
  const conditions = node.status?.conditions ?? [];
  let found: { at: number; detail: string } | undefined;
  let next: number | undefined;
  for (const rule of rules) {
    const condition = conditions.find((candidate) => candidate.type === rule.type);
    if (condition === undefined || condition.status !== rule.status) continue;
    const since = transitionTime(condition);
    if (since === undefined && rule.durationSeconds > 0) continue;
    const at = (since ?? now.getTime()) + rule.durationSeconds * 1000;
    if (at > now.getTime()) {
      next = Math.min(next ?? at, at);
    } else if (found === undefined || at < found.at) {
      const from = since === undefined ? '' : ` since ${formatTime(new Date(since))}`;
      const detail =
        `Node ${node.metadata.name} has ${rule.type}=${rule.status}${from} ` +
        `(unhealthy after ${rule.durationSeconds}s)`;
      found = { at, detail };
    }
  }
  if (found !== undefined) {
    return unhealthy(CELL_HEALTH_REASONS.UnhealthyNode, found.detail, new Date(found.at));
  }
  return {
    health: 'Healthy',
    reason: CELL_HEALTH_REASONS.NodeHealthy,
    ...(next !== undefined ? { nextCheck: new Date(next) } : {}),
  };
}

function judgeStartup(
  machine: MachineObject,
  provisioner: CellObservation['provisioner'],
  timeoutSeconds: number,
  now: Date,
): HealthVerdict {
  const started = timeoutSeconds > 0 ? machineStartedAt(machine, provisioner) : undefined;
  if (started === undefined) return { health: 'Healthy', reason: CELL_HEALTH_REASONS.Starting };
  const due = new Date(started.getTime() + timeoutSeconds * 1000);
  if (due.getTime() > now.getTime()) {
    return { health: 'Healthy', reason: CELL_HEALTH_REASONS.Starting, nextCheck: due };
  }
  return unhealthy(
    CELL_HEALTH_REASONS.NodeStartupTimeout,
    `no Node joined within ${timeoutSeconds}s of ${machine.metadata.name} running ` +
      `(since ${formatTime(started)})`,
    due,
  );
}

/** Milliseconds since the epoch of a condition's last transition; undefined when not told. */
function transitionTime(condition: TimedCondition): number | undefined {
  const time = Date.parse(condition.lastTransitionTime ?? '');
  return Number.isNaN(time) ? undefined : time;
}

/** When the machine's condition turned True; undefined when it is not True or not dated. */
function trueSince(machine: MachineObject, type: string): Date | undefined {
  const condition = machine.status?.conditions?.find((candidate) => candidate.type === type);
  const since = condition?.status === 'True' ? transitionTime(condition) : undefined;
  return since === undefined ? undefined : new Date(since);
}

/** Phases of a Cluster API Machine whose infrastructure runs. */
const RUNNING_MACHINE_PHASES: ReadonlySet<string> = new Set(['Provisioned', 'Running']);

/**
 * When the machine started running, or undefined while it does not run: KubeVirt, the
 * VirtualMachine's Ready condition (copied from its VirtualMachineInstance); Cluster API, the
 * Machine's InfrastructureReady condition. Without the condition, the machine's creation once
 * its status says it runs (printableStatus Running; phase Provisioned or Running).
 */
export function machineStartedAt(
  machine: MachineObject,
  provisioner: CellObservation['provisioner'],
): Date | undefined {
  const kubeVirt = provisioner === 'KubeVirt';
  const since = trueSince(machine, kubeVirt ? 'Ready' : 'InfrastructureReady');
  if (since !== undefined) return since;
  const runs = kubeVirt
    ? machine.status?.printableStatus === 'Running'
    : RUNNING_MACHINE_PHASES.has(machine.status?.phase ?? '');
  const created = Date.parse(machine.metadata.creationTimestamp ?? '');
  return runs && !Number.isNaN(created) ? new Date(created) : undefined;
}

/** Why the machine failed for good, or undefined. */
export function machineFailure(
  machine: MachineObject,
  provisioner: CellObservation['provisioner'],
): string | undefined {
  const name = machine.metadata.name;
  const status = machine.status;
  if (provisioner === 'KubeVirt') {
    return status?.printableStatus === 'CrashLoopBackOff'
      ? `VirtualMachine ${name} is in CrashLoopBackOff`
      : undefined;
  }
  if (status?.phase === 'Failed') return `Machine ${name} is in phase Failed`;
  const reason = v1beta1FailureReason(status?.deprecated);
  return reason === undefined ? undefined : `Machine ${name} failed: ${reason}`;
}

/** status.deprecated.v1beta1.failureReason of a Cluster API v1beta2 Machine. */
function v1beta1FailureReason(deprecated: unknown): string | undefined {
  const v1beta1 = (deprecated as { v1beta1?: { failureReason?: unknown } } | null | undefined)
    ?.v1beta1;
  const reason = v1beta1?.failureReason;
  return typeof reason === 'string' && reason !== '' ? reason : undefined;
}

// --- the pool ---

/** The most unhealthy cells the pool remediates, of `total`. */
export function maxUnhealthyCount(maxUnhealthy: number | string, total: number): number {
  if (typeof maxUnhealthy === 'number') return maxUnhealthy;
  const percent = /^(\d+)%$/.exec(maxUnhealthy);
  if (percent === null) return Number(maxUnhealthy);
  const share = Number(percent[1]);
  const scaled = Math.floor((share * total) / 100);
  return share > 0 ? Math.max(1, scaled) : scaled;
}

export interface RemediationGate {
  allowed: boolean;
  reason: (typeof REMEDIATION_REASONS)[keyof typeof REMEDIATION_REASONS];
  message: string;
}

/**
 * Whether unhealthy cells may be remediated: `unhealthy` counts the Unhealthy and Remediating
 * cells of the `total` the pool watches.
 */
export function remediationGate(
  policy: HealthPolicy,
  unhealthy: number,
  total: number,
): RemediationGate {
  if (policy.remediation === 'None') {
    return {
      allowed: false,
      reason: REMEDIATION_REASONS.RemediationDisabled,
      message: `spec.health.remediation is None: ${unhealthy} of ${total} cells unhealthy, none is replaced`,
    };
  }
  const limit = maxUnhealthyCount(policy.maxUnhealthy, total);
  const counted = `${unhealthy} of ${total} cells unhealthy, maxUnhealthy ${String(policy.maxUnhealthy)} allows ${limit}`;
  if (unhealthy > limit) {
    return {
      allowed: false,
      reason: REMEDIATION_REASONS.TooManyUnhealthy,
      message:
        `${counted}: nothing more is remediated, the cause is likely shared; fix it, or raise ` +
        `spec.health.maxUnhealthy`,
    };
  }
  return {
    allowed: true,
    reason: REMEDIATION_REASONS.RemediationAllowed,
    message: `${counted}: unhealthy cells are replaced`,
  };
}

/** Seconds until the earliest of `instants` (at least 1), or undefined when there is none. */
export function resyncSeconds(
  now: Date,
  instants: readonly (Date | undefined)[],
): number | undefined {
  const times = instants.flatMap((instant) => (instant === undefined ? [] : [instant.getTime()]));
  if (times.length === 0) return undefined;
  return Math.max(1, Math.ceil((Math.min(...times) - now.getTime()) / 1000));
}
