import type { CellNodePortStatus } from '../generated/types/index.js';
import type { Service } from '../kube/objects.js';

/** NodePorts in use across the cluster: every port of every Service the apiserver gave one. */
export function countNodePorts(services: readonly Service[] | undefined): CellNodePortStatus {
  let allocated = 0;
  for (const service of services ?? []) {
    for (const port of service.spec?.ports ?? []) if (port.nodePort) allocated += 1;
  }
  return { allocated, fresh: services !== undefined };
}
