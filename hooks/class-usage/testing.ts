/** Fixtures of the class-usage tests (not loaded in production). */
import { API_VERSION } from '../api/kinds.js';
import type { VirtualCluster, VirtualNodeClass } from '../generated/types/index.js';

export const NOW = new Date('2026-11-30T00:00:00Z');

export function virtualNodeClass(name = 'small', uid = `uid-class-${name}`): VirtualNodeClass {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualNodeClass',
    metadata: { name, uid, generation: 1 },
    spec: {
      entitlement: { workloadHard: { 'requests.cpu': '4', 'requests.nvidia.com/gpu': '2' } },
      storageClassName: 'topolvm-provisioner',
    },
  };
}

/**
 * A VirtualCluster labelled with its class (as the mutating webhook does). `resolvedTo` is the
 * class its status.resolved snapshot names (name and uid); omit it for a Pending one.
 */
export function virtualCluster(
  namespace: string,
  name: string,
  className: string,
  resolvedTo?: { name: string; uid: string },
): VirtualCluster {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualCluster',
    metadata: {
      name,
      namespace,
      uid: `uid-vc-${namespace}-${name}`,
      labels: { 'kubecell.io/cell': 'cell1', 'kubecell.io/class': className },
    },
    spec: { cellRef: { name: 'cell1' }, classRef: { name: className } },
    ...(resolvedTo
      ? {
          status: {
            phase: 'Ready',
            resolved: {
              cell: {
                name: 'cell1',
                uid: 'uid-cell1',
                managedClusterName: 'cell1',
                machineProfile: {
                  name: 'a100',
                  devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
                },
              },
              class: {
                name: resolvedTo.name,
                uid: resolvedTo.uid,
                storageClassName: 'topolvm-provisioner',
                entitlement: { workloadHard: { 'requests.cpu': '4' } },
              },
              hostNamespace: namespace,
              endpointAddress: '10.0.12.7',
              resolvedAt: '2026-11-30T00:00:00Z',
            },
          },
        }
      : {}),
  } as VirtualCluster;
}
