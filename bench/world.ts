/**
 * The KubeCell objects the Metacontroller benchmarks apply as a user would: one Cell, one
 * VirtualNodeClass, and VirtualClusters on them. Each part passes its own names.
 */
import type { KubeObject } from '../test/simulate/index.js';

export interface BenchWorldNames {
  cellNamespace: string;
  cell: string;
  profile: string;
  klass: string;
  entitlement: Record<string, string>;
  virtualCluster: string;
}

export function cellObject(names: BenchWorldNames): KubeObject {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'Cell',
    metadata: { name: names.cell, namespace: names.cellNamespace },
    spec: { managedClusterRef: { name: names.cell }, machineProfile: { name: names.profile } },
  } as KubeObject;
}

export function classObject(names: BenchWorldNames): KubeObject {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualNodeClass',
    metadata: { name: names.klass },
    spec: {
      entitlement: { workloadHard: names.entitlement },
      storageClassName: 'topolvm-provisioner',
    },
  } as KubeObject;
}

export function virtualClusterObject(names: BenchWorldNames, namespace: string): KubeObject {
  return {
    apiVersion: 'kubecell.io/v1alpha1',
    kind: 'VirtualCluster',
    metadata: { name: names.virtualCluster, namespace },
    spec: { cellRef: { name: names.cell }, classRef: { name: names.klass } },
  } as KubeObject;
}
