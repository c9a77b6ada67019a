/** Labels and annotations that are part of KubeCell's contract with the platform. */
export const LABELS = {
  machineProfile: 'kubecell.io/machine-profile',
  hostNamespace: 'kubecell.io/host-namespace',
  cell: 'kubecell.io/cell',
  class: 'kubecell.io/class',
  pool: 'kubecell.io/pool',
} as const;

export const ANNOTATIONS = {
  skipCleanup: 'kubecell.io/skip-cleanup',
  /** TopoLVM publishes each device class's free bytes on the Node under this prefix. */
  topolvmCapacityPrefix: 'capacity.topolvm.io/',
} as const;
