/**
 * The reasons of the GPUCellPool conditions, one map per condition. Each key is its token.
 * Reasons are API: tools and alerts match on them, so a token is never renamed or reused for
 * another meaning. docs/autoscaling.md lists the ScalingActive reasons, docs/cell-image.md the
 * Ready and BootstrapValid reasons, docs/autoscaling.md (Cell health) the health reasons, and
 * docs/troubleshooting.md all of them; `docs.test.ts` and
 * test/install/troubleshooting.test.ts fail when a document and this module disagree.
 */

/**
 * ScalingActive: whether the autoscaler can act, and why it does what it does. A closed set: the
 * condition carries no other reason.
 */
export const SCALING_REASONS = {
  /** False: spec.autoscaling is not set; status.desiredReplicas is spec.replicas. */
  AutoscalingDisabled: 'AutoscalingDisabled',
  /** False: Metacontroller delivered no pods or no consumer namespaces; the size is held. */
  DemandNotObserved: 'DemandNotObserved',
  /** True: unschedulable GPU pods target the profile; one cell is being added. */
  ScalingUp: 'ScalingUp',
  /** True: GPU pods are pending, but a cell is still coming up; no other cell is added yet. */
  WaitingForCells: 'WaitingForCells',
  /** False: GPU pods are pending and the pool is at maxReplicas. */
  AtMaxReplicas: 'AtMaxReplicas',
  /** True: cells idle for scaleDownDelaySeconds are being retired. */
  ScalingDown: 'ScalingDown',
  /** True: cells are idle past the delay, but the pool is at minReplicas. */
  AtMinReplicas: 'AtMinReplicas',
  /** True: some cells are idle; none for scaleDownDelaySeconds yet. */
  WaitingForScaleDownDelay: 'WaitingForScaleDownDelay',
  /** True: nothing is pending and no cell is idle: the size fits the demand. */
  DemandMet: 'DemandMet',
} as const;
export type ScalingReason = (typeof SCALING_REASONS)[keyof typeof SCALING_REASONS];

/** Ready. */
export const READY_REASONS = {
  /** True: every cell the pool wants exists and its current Node is Ready. */
  AllCellsReady: 'AllCellsReady',
  /** False: some cells are provisioning, not Ready, or still to be created. */
  CellsNotReady: 'CellsNotReady',
  /** False: cells are missing and cannot be created: see BootstrapValid. */
  BootstrapInvalid: 'BootstrapInvalid',
  /** False: cells are missing and the GPU ResourceClaim or ResourceClaimTemplate does not exist. */
  GPUClaimNotFound: 'GPUClaimNotFound',
  /** False: cells are missing and a Cluster API template does not exist. */
  MachineTemplateNotFound: 'MachineTemplateNotFound',
  /**
   * False: a kind new machines need (the GPU claim's, a Cluster API template's or its clone's) is
   * not served by the apiserver; cells are missing and none is created until it is installed.
   */
  KindNotServed: 'KindNotServed',
  /** False: Metacontroller did not deliver a group the pool needs; nothing is created or removed. */
  NotObserved: 'NotObserved',
  /**
   * False: the pool has no label kubecell.io/provisioner, so no GPUCellPool controller selects it
   * any more (reported by the controller that had it); every child is kept as it is.
   */
  ProvisionerLabelMissing: 'ProvisionerLabelMissing',
  /**
   * False: the label kubecell.io/provisioner contradicts spec.provisioner.type, so the pool
   * reached the controller of another provisioner (or left its own); every child is kept as it is.
   */
  ProvisionerLabelMismatch: 'ProvisionerLabelMismatch',
  /** False: the pool is being deleted; its cells are retired. */
  Deleting: 'Deleting',
} as const;

/** BootstrapValid. */
export const BOOTSTRAP_REASONS = {
  /** True: the join Secret exists and its user-data template renders. */
  TemplateValid: 'TemplateValid',
  /** True: the Cluster API bootstrap provider supplies the join data (spec.bootstrap unused). */
  ClusterAPIBootstrap: 'ClusterAPIBootstrap',
  /** False: the join Secret does not exist in spec.namespace. */
  JoinSecretNotFound: 'JoinSecretNotFound',
  /** False: a key the template needs (or user-data itself) is missing from the join Secret. */
  JoinSecretKeyMissing: 'JoinSecretKeyMissing',
  /** False: a join Secret value that must be one line has a line break or is not UTF-8. */
  JoinSecretValueInvalid: 'JoinSecretValueInvalid',
  /** False: the template uses a variable outside the closed set. */
  UnknownVariable: 'UnknownVariable',
  /** False: the Cluster API bootstrap config template does not exist. */
  BootstrapTemplateNotFound: 'BootstrapTemplateNotFound',
  /** False: the kind of the Cluster API bootstrap config template (or of its clone) is not served. */
  KindNotServed: 'KindNotServed',
  /** Unknown: Metacontroller delivered no Secrets (or no templates): not observed. */
  NotObserved: 'NotObserved',
} as const;

/**
 * status.cells[].healthReason: why a cell has its health (schemas/gpucellpool.schema.json lists
 * the same tokens in its enum). The first two are Healthy, the others Unhealthy, and a cell in
 * remediation keeps the reason it was found unhealthy for.
 */
export const CELL_HEALTH_REASONS = {
  /** Healthy: the cell's Node joined and holds no condition of spec.health.unhealthyConditions. */
  NodeHealthy: 'NodeHealthy',
  /** Healthy: no Node yet, within nodeStartupTimeoutSeconds of the machine running (or not running yet). */
  Starting: 'Starting',
  /** Unhealthy: a Node condition of spec.health.unhealthyConditions held for its duration. */
  UnhealthyNode: 'UnhealthyNode',
  /** Unhealthy: the machine ran nodeStartupTimeoutSeconds without a Node joining. */
  NodeStartupTimeout: 'NodeStartupTimeout',
  /** Unhealthy: the cell's Node had joined and is gone, while its machine remains. */
  NodeDeleted: 'NodeDeleted',
  /** Unhealthy: the Cluster API Machine failed, or the KubeVirt VirtualMachine is in CrashLoopBackOff. */
  MachineFailed: 'MachineFailed',
  /**
   * Unhealthy, then Remediating: a user asked for the cell's replacement with the annotation
   * kubecell.io/replace=true on its machine (e.g. to roll it onto a rotated join Secret).
   */
  ReplacementRequested: 'ReplacementRequested',
} as const;
export type CellHealthReason = (typeof CELL_HEALTH_REASONS)[keyof typeof CELL_HEALTH_REASONS];

/** CellsHealthy. */
export const CELLS_HEALTHY_REASONS = {
  /** True: every cell passes the health checks of spec.health. */
  AllCellsHealthy: 'AllCellsHealthy',
  /** False: some cells are Unhealthy or Remediating; the message names them and why. */
  CellsUnhealthy: 'CellsUnhealthy',
} as const;

/** RemediationAllowed (the names of Cluster API's MachineHealthCheck condition and reasons). */
export const REMEDIATION_REASONS = {
  /** True: no more cells are unhealthy than spec.health.maxUnhealthy allows; they are replaced. */
  RemediationAllowed: 'RemediationAllowed',
  /** False: more cells are unhealthy than maxUnhealthy allows: nothing more is remediated. */
  TooManyUnhealthy: 'TooManyUnhealthy',
  /** False: spec.health.remediation is None: unhealthy cells are only reported. */
  RemediationDisabled: 'RemediationDisabled',
} as const;

/** JoinContentCurrent (informational: Ready does not depend on it). */
export const JOIN_CONTENT_REASONS = {
  /** True: every cell's user-data was rendered from the join Secret's current content. */
  AllCellsCurrent: 'AllCellsCurrent',
  /** False: some cells booted from an older content (or one not known); the message names them. */
  CellsOnOlderJoinContent: 'CellsOnOlderJoinContent',
  /** Unknown: the join Secret was not observed or does not exist, so nothing is compared. */
  JoinSecretUnavailable: 'JoinSecretUnavailable',
} as const;
