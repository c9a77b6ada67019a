/** Labels and annotations that are part of KubeCell's contract with the platform. */
export const LABELS = {
  machineProfile: 'kubecell.io/machine-profile',
  hostNamespace: 'kubecell.io/host-namespace',
  cell: 'kubecell.io/cell',
  class: 'kubecell.io/class',
  pool: 'kubecell.io/pool',
  /**
   * On a GPUCellPool: which provisioner's CompositeController selects it
   * (`spec.parentResource.labelSelector` of metacontroller/gpucellpool/<value>/controller.yaml).
   * The admission webhook sets it from spec.provisioner.type.
   */
  provisioner: 'kubecell.io/provisioner',
} as const;

export const ANNOTATIONS = {
  skipCleanup: 'kubecell.io/skip-cleanup',
  /**
   * On a VirtualCluster with spec.cellSelector, set at creation: the VirtualClusterPlan of its
   * namespace whose chosen Cell resolution takes while it still fits (status.resolved.plan).
   */
  plan: 'kubecell.io/plan',
  /** TopoLVM publishes each device class's free bytes on the Node under this prefix. */
  topolvmCapacityPrefix: 'capacity.topolvm.io/',
  /**
   * On a pool Node whose cell is not Healthy: Unhealthy or Remediating (the GPUCellPool writes
   * it, a Cell reads it; hooks/api/node-health.ts). A healthy cell's Node carries neither.
   */
  cellHealth: 'kubecell.io/cell-health',
  /** With cellHealth: why (status.cells[].healthReason of the pool, e.g. UnhealthyNode). */
  cellHealthReason: 'kubecell.io/cell-health-reason',
} as const;

/**
 * The value of the pool label `kubecell.io/provisioner` for each spec.provisioner.type, which is
 * also the name of the provisioner's component folder under metacontroller/gpucellpool/ and the
 * suffix of its CompositeController (`kubecell-gpucellpool-<value>`).
 */
export const PROVISIONER_LABEL_VALUES = {
  KubeVirt: 'kubevirt',
  ClusterAPI: 'cluster-api',
} as const;
export type ProvisionerType = keyof typeof PROVISIONER_LABEL_VALUES;

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A string usable as a label value (63 characters at most, alphanumeric at both ends). */
export function isLabelValue(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 63 && LABEL_VALUE.test(value);
}

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * A string usable as a label key: a name of 63 characters at most, alphanumeric at both ends,
 * after an optional DNS-subdomain prefix and `/` (Kubernetes' qualified name).
 */
export function isLabelKey(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const slash = value.indexOf('/');
  const name = slash < 0 ? value : value.slice(slash + 1);
  const prefix = slash < 0 ? undefined : value.slice(0, slash);
  return (
    name.length <= 63 &&
    LABEL_NAME.test(name) &&
    (prefix === undefined || (prefix.length <= 253 && LABEL_PREFIX.test(prefix)))
  );
}
