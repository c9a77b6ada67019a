/**
 * The few fields of core Kubernetes objects the hooks read, as they arrive on the wire (JSON,
 * timestamps as strings). Deliberately partial: a hook reads what it needs and ignores the rest.
 */
import type { KubernetesObject } from '../metacontroller/protocol.js';

export type ResourceMap = Record<string, string | number>;

export interface ObjectCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Node extends KubernetesObject {
  spec?: { unschedulable?: boolean; taints?: { key: string; effect: string; value?: string }[] };
  status?: {
    capacity?: ResourceMap;
    allocatable?: ResourceMap;
    conditions?: ObjectCondition[];
    addresses?: { type: string; address: string }[];
    nodeInfo?: { systemUUID?: string };
  };
}

export interface Container {
  name: string;
  resources?: { requests?: ResourceMap; limits?: ResourceMap };
  restartPolicy?: string;
}

export interface Pod extends KubernetesObject {
  spec?: {
    nodeName?: string;
    containers?: Container[];
    initContainers?: Container[];
    overhead?: ResourceMap;
  };
  status?: { phase?: string };
}

export interface Namespace extends KubernetesObject {
  status?: { phase?: string };
}

export interface Service extends KubernetesObject {
  spec?: { type?: string; ports?: { name?: string; port: number; nodePort?: number }[] };
}

export interface PersistentVolume extends KubernetesObject {
  spec?: {
    capacity?: ResourceMap;
    csi?: { driver?: string };
    nodeAffinity?: {
      required?: {
        nodeSelectorTerms?: {
          matchExpressions?: { key: string; operator: string; values?: string[] }[];
        }[];
      };
    };
  };
}

export interface Lease extends KubernetesObject {
  spec?: { renewTime?: string; leaseDurationSeconds?: number };
}

export interface ManagedCluster extends KubernetesObject {
  spec?: { hubAcceptsClient?: boolean; leaseDurationSeconds?: number };
  status?: { conditions?: ObjectCondition[] };
}

export interface Deployment extends KubernetesObject {
  spec?: { template?: { spec?: { containers?: { name: string; image?: string }[] } } };
  status?: { availableReplicas?: number; conditions?: ObjectCondition[] };
}

export interface DaemonSet extends KubernetesObject {
  status?: { desiredNumberScheduled?: number; numberReady?: number };
}

export interface CustomResourceDefinition extends KubernetesObject {
  status?: { conditions?: ObjectCondition[] };
}

const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A DNS subdomain (at most 253 characters): the name of most Kubernetes objects. */
export function isDnsSubdomain(value: string): boolean {
  return DNS_SUBDOMAIN.test(value);
}

export function conditionIsTrue(conditions: ObjectCondition[] | undefined, type: string): boolean {
  return (
    conditions?.some((condition) => condition.type === type && condition.status === 'True') ?? false
  );
}

/** Type keys of the v2 hook maps for the kinds KubeCell observes (`Kind.group/version`). */
export const TYPE_KEYS = {
  node: 'Node.v1',
  pod: 'Pod.v1',
  namespace: 'Namespace.v1',
  service: 'Service.v1',
  secret: 'Secret.v1',
  configMap: 'ConfigMap.v1',
  persistentVolume: 'PersistentVolume.v1',
  resourceQuota: 'ResourceQuota.v1',
  limitRange: 'LimitRange.v1',
  lease: 'Lease.coordination.k8s.io/v1',
  managedCluster: 'ManagedCluster.cluster.open-cluster-management.io/v1',
  deployment: 'Deployment.apps/v1',
  daemonSet: 'DaemonSet.apps/v1',
  customResourceDefinition: 'CustomResourceDefinition.apiextensions.k8s.io/v1',
  k3kCluster: 'Cluster.k3k.io/v1beta1',
  cell: 'Cell.kubecell.io/v1alpha1',
  virtualNodeClass: 'VirtualNodeClass.kubecell.io/v1alpha1',
  virtualCluster: 'VirtualCluster.kubecell.io/v1alpha1',
  virtualClusterPlan: 'VirtualClusterPlan.kubecell.io/v1alpha1',
} as const;
