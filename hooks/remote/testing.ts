/** Fixtures for the remote/ tests and for the modules that read reports. */
import type { CellReport } from './report.js';

/** A report of profile a100: two Nodes, one Ready, with GPUs, TopoLVM and NodePorts. */
export function sampleReport(): CellReport {
  return {
    version: 1,
    machineProfile: 'a100',
    observedAt: '2026-12-01T12:00:00Z',
    nodeCount: { total: 2, ready: 1 },
    notReadyNodes: [{ name: 'gpu-2', reasons: ['KubeletNotReady'] }],
    nodeAddresses: [{ node: 'gpu-1', address: '10.0.0.11' }],
    resources: {
      cpu: { capacity: '64', allocatable: '62', requested: '4', pending: '0' },
      'nvidia.com/gpu': { capacity: '8', allocatable: '8', requested: '2', pending: '1' },
    },
    storageInventory: {
      provisioner: 'topolvm.io',
      allocatedPV: '10Gi',
      freeCapacity: '900Gi',
      freeCapacityKnown: true,
      freeCapacitySource: 'TopoLVMNodeAnnotations',
      fresh: true,
    },
    nodePorts: { allocated: 3, fresh: true },
    provider: {
      k3kVersion: 'v1.1.0',
      namespaceReady: true,
      k3kCRDsReady: true,
      controllerReady: true,
      cniReady: true,
      topolvmReady: true,
    },
  };
}
