/** Fixtures shared by the feasibility and plan tests (not loaded in production). */
import { API_VERSION } from '../api/kinds.js';
import type { Cell, VirtualCluster, VirtualNodeClass } from '../generated/types/index.js';
import { DEFAULT_NODE_PORT_RANGE, type FeasibilityInput } from './evaluate.js';

export const NOW = new Date('2026-11-30T00:00:00Z');

/** A deep copy, so a test can change a fixture freely. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

/** A Ready Cell with fresh inventory: 23.5 cpu, 244Gi memory, 4 GPUs, 2Ti storage free. */
export function readyCell(): Cell {
  return {
    apiVersion: API_VERSION,
    kind: 'Cell',
    metadata: { name: 'cell1', namespace: 'kubecell-system', uid: 'cell1-uid', generation: 1 },
    spec: {
      managedClusterRef: { name: 'cell1' },
      machineProfile: {
        name: 'a100',
        devices: [{ name: 'gpu', resourceName: 'nvidia.com/gpu' }],
      },
    },
    status: {
      observedGeneration: 1,
      phase: 'Ready',
      conditions: [
        {
          type: 'InventoryFresh',
          status: 'True',
          reason: 'Observed',
          message: 'Node, pod, storage and NodePort inventories were observed.',
          lastTransitionTime: '2026-11-29T20:00:00Z',
        },
      ],
      managedCluster: {
        name: 'cell1',
        uid: 'mc-uid',
        joined: true,
        available: true,
        leaseFresh: true,
      },
      nodeCount: { total: 1, ready: 1 },
      nodeAddresses: [{ node: 'node-a', address: '10.0.12.7' }],
      inventory: readyInventory(),
      storageInventory: {
        provisioner: 'topolvm.io',
        allocatedPV: '500Gi',
        freeCapacity: '2Ti',
        freeCapacityKnown: true,
        freeCapacitySource: 'TopoLVMNodeAnnotations',
        fresh: true,
      },
      nodePorts: { allocated: 10, fresh: true },
      resolvedBy: 2,
      observedAt: '2026-11-29T23:59:50Z',
    },
  };
}

/** readyCell()'s inventory: 23.5 cpu, 244Gi memory and 4 GPUs still to promise. */
function readyInventory(): NonNullable<Cell['status']>['inventory'] {
  return {
    cpu: {
      capacity: '64',
      allocatable: '63500m',
      requested: '12',
      pending: '1',
      committed: '40',
      availableEstimate: '23500m',
    },
    memory: {
      capacity: '512Gi',
      allocatable: '500Gi',
      requested: '100Gi',
      pending: '0',
      committed: '256Gi',
      availableEstimate: '244Gi',
    },
    'nvidia.com/gpu': {
      capacity: '8',
      allocatable: '8',
      requested: '2',
      pending: '0',
      committed: '4',
      availableEstimate: '4',
    },
  };
}

/** Class "small": 4 cpu, 16Gi, 2 GPUs, 100Gi storage, and keys that are not capacity-checked. */
export function smallClass(): VirtualNodeClass {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualNodeClass',
    metadata: { name: 'small', uid: 'small-uid', generation: 1 },
    spec: {
      entitlement: {
        workloadHard: {
          'requests.cpu': '4',
          'requests.memory': '16Gi',
          'requests.nvidia.com/gpu': '2',
          'limits.cpu': '8',
          'limits.memory': '32Gi',
          'requests.storage': '100Gi',
          pods: '100',
          'count/deployments.apps': '20',
        },
      },
      storageClassName: 'topolvm-provisioner',
    },
  };
}

/** A VirtualCluster in `namespace`, resolved to `cellName` with `workloadHard` when given. */
export function virtualCluster(
  name: string,
  namespace: string,
  resolved?: { cellName: string; cellUid?: string; workloadHard: Record<string, string> },
): VirtualCluster {
  const vc: VirtualCluster = {
    apiVersion: API_VERSION,
    kind: 'VirtualCluster',
    metadata: { name, namespace, uid: `${name}-uid`, generation: 1 },
    spec: { cellRef: { name: resolved?.cellName ?? 'cell1' }, classRef: { name: 'small' } },
  };
  if (resolved !== undefined) {
    vc.status = {
      phase: 'Ready',
      resolved: {
        cell: {
          name: resolved.cellName,
          uid: resolved.cellUid ?? `${resolved.cellName}-uid`,
          managedClusterName: resolved.cellName,
          machineProfile: { name: 'a100' },
        },
        class: {
          name: 'small',
          uid: 'small-uid',
          storageClassName: 'topolvm-provisioner',
          entitlement: { workloadHard: resolved.workloadHard },
        },
        hostNamespace: namespace,
        endpointAddress: '10.0.12.7',
        resolvedAt: '2026-11-01T00:00:00Z',
      },
    };
  }
  return vc;
}

/** An input that evaluates to Accepted. */
export function acceptedInput(): FeasibilityInput {
  return {
    cellName: 'cell1',
    cell: readyCell(),
    className: 'small',
    virtualNodeClass: smallClass(),
    namespace: 'tenant-a',
    namespaceLabels: { 'kubecell.io/host-namespace': 'true' },
    virtualClusters: [
      virtualCluster('other', 'tenant-b', {
        cellName: 'cell1',
        workloadHard: { 'requests.cpu': '20', 'requests.nvidia.com/gpu': '2' },
      }),
    ],
    nodePortRange: DEFAULT_NODE_PORT_RANGE,
    now: NOW,
  };
}
