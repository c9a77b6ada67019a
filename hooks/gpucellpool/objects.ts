/**
 * The few fields of the objects the GPUCellPool controller reads, as they arrive on the wire.
 * Deliberately partial (hooks/kube/objects.ts has the shared core kinds).
 */
import type { ObjectCondition } from '../kube/objects.js';
import type { KubernetesObject } from '../metacontroller/protocol.js';

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface PodObject extends KubernetesObject {
  spec?: {
    nodeName?: string;
    nodeSelector?: Record<string, string>;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms?: { matchExpressions?: NodeSelectorRequirement[] }[];
        };
      };
    };
    containers?: PodContainer[];
    initContainers?: PodContainer[];
  };
  status?: { phase?: string; conditions?: ObjectCondition[] };
}

export interface PodContainer {
  name: string;
  resources?: {
    requests?: Record<string, string | number>;
    limits?: Record<string, string | number>;
  };
}

export interface NodeObject extends KubernetesObject {
  spec?: {
    unschedulable?: boolean;
    providerID?: string;
    taints?: { key: string; effect: string; value?: string; timeAdded?: string }[];
  };
  status?: {
    conditions?: TimedCondition[] | null;
    nodeInfo?: { systemUUID?: string };
  };
}

/** A condition with the time of its last status change (null or absent when not told). */
export interface TimedCondition extends ObjectCondition {
  lastTransitionTime?: string | null;
}

export interface SecretObject extends KubernetesObject {
  type?: string;
  data?: Record<string, string>;
}

/**
 * A KubeVirt VirtualMachine or a Cluster API Machine. The validation layer checks `conditions`
 * and `phase` (hooks/controllers/observed-object.ts); the other fields are read with care.
 */
export interface MachineObject extends KubernetesObject {
  spec?: { providerID?: string } & Record<string, unknown>;
  status?: {
    nodeRef?: { name?: string };
    conditions?: TimedCondition[] | null;
    /** Cluster API: the Machine's phase (Failed only on objects converted from v1beta1). */
    phase?: string | null;
    /** KubeVirt: the VirtualMachine's printable status (CrashLoopBackOff, Running, ...). */
    printableStatus?: unknown;
    /** Cluster API v1beta2: deprecated.v1beta1.failureReason of a terminal failure. */
    deprecated?: unknown;
  } & Record<string, unknown>;
}

/** resource.k8s.io/v1 ResourceClaim (`spec.devices`) or ResourceClaimTemplate (`spec.spec.devices`). */
export interface ClaimObject extends KubernetesObject {
  spec?: {
    devices?: { requests?: { name?: string }[] };
    spec?: { devices?: { requests?: { name?: string }[] } };
  };
}

/** A Cluster API template: `spec.template.{metadata, spec}`. */
export interface TemplateObject extends KubernetesObject {
  spec?: {
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: Record<string, unknown>;
    };
  };
}
