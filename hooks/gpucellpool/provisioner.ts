/**
 * Which GPUCellPool controller a pool belongs to, and what a pool says when it reached the wrong
 * one.
 *
 * Each provisioner has a CompositeController of its own (metacontroller/gpucellpool/kubevirt/ and
 * metacontroller/gpucellpool/cluster-api/), so that a platform installs only the one whose CRDs
 * it serves. Each selects its pools with `spec.parentResource.labelSelector` on the label
 * `kubecell.io/provisioner=<kubevirt|cluster-api>`, which the admission webhook sets from
 * spec.provisioner.type. What Metacontroller v4.17.2 does with that selector
 * (pkg/controller/composite/controller.go, hooks.go):
 *
 * - a pool that does not match is ignored (`doNotMatchLabels` in `enqueueParentObject`,
 *   `resolveControllerRef`, `syncParentObject`) unless it carries the controller's finalizer;
 * - a pool that carries the finalizer but stopped matching (its label was removed or changed) is
 *   handed to the finalize hook, with no deletionTimestamp (`shouldCallFinalizeHook`), until that
 *   hook answers `finalized: true`.
 *
 * The hooks are the same for both controllers (one URL, /hooks/gpucellpool/...); they tell which
 * controller called from the child types of the request (Metacontroller sends one group per
 * `childResources` entry, empty or not: `claimChildren`, `InitGroup`).
 */
import type { GPUCellPool } from '../generated/types/index.js';
import type { ObjectMap } from '../metacontroller/protocol.js';
import {
  ANNOTATIONS,
  LABELS,
  PROVISIONER_LABEL_VALUES,
  type ProvisionerType,
} from '../kube/labels.js';
import { READY_REASONS } from './reasons.js';
import { CHILD_TYPES } from './observe.js';

/** The label value a pool of this provisioner type must carry. */
export function provisionerLabelValue(type: ProvisionerType): string {
  return PROVISIONER_LABEL_VALUES[type];
}

/** A pool whose label does not select the controller of its type, and what to do about it. */
export interface ProvisionerLabelProblem {
  reason:
    typeof READY_REASONS.ProvisionerLabelMissing | typeof READY_REASONS.ProvisionerLabelMismatch;
  message: string;
}

const KEPT =
  'until then every cell, machine, Secret and Node of the pool is kept as it is and nothing is ' +
  'created or removed';

/** What is wrong with the pool's `kubecell.io/provisioner` label, or undefined when it is right. */
export function provisionerLabelProblem(pool: GPUCellPool): ProvisionerLabelProblem | undefined {
  const type = pool.spec.provisioner.type;
  const wanted = provisionerLabelValue(type);
  const labels = pool.metadata.labels ?? {};
  const key = LABELS.provisioner;
  const name = pool.metadata.name;
  if (!Object.hasOwn(labels, key)) {
    return {
      reason: READY_REASONS.ProvisionerLabelMissing,
      message:
        `the pool has no label ${key}, by which the ${type} controller ` +
        `(kubecell-gpucellpool-${wanted}) selects its pools: label it with ` +
        `"kubectl label gpucellpool ${name} ${key}=${wanted}" (the KubeCell admission webhook ` +
        `sets it from spec.provisioner.type); ${KEPT}`,
    };
  }
  const value = labels[key];
  if (value === wanted) return undefined;
  return {
    reason: READY_REASONS.ProvisionerLabelMismatch,
    message:
      `the label ${key}=${value ?? ''} contradicts spec.provisioner.type ${type}, whose ` +
      `controller (kubecell-gpucellpool-${wanted}) selects ${key}=${wanted}: fix it with ` +
      `"kubectl label gpucellpool ${name} ${key}=${wanted} --overwrite" (the KubeCell admission ` +
      `webhook sets it from spec.provisioner.type) and install that controller ` +
      `("kubectl apply -k metacontroller/gpucellpool/${wanted}"); ${KEPT}`,
  };
}

/** Child type keys of each provisioner's machine. */
const MACHINE_CHILD_TYPES: Record<ProvisionerType, string> = {
  KubeVirt: CHILD_TYPES.virtualMachine,
  ClusterAPI: CHILD_TYPES.machine,
};

/**
 * The provisioners the calling controller can run: those whose machine kind is one of its child
 * types. Empty when the request carries neither (a children map that is not Metacontroller's).
 */
export function controllerProvisioners(children: ObjectMap): Set<ProvisionerType> {
  const served = new Set<ProvisionerType>();
  for (const [type, key] of Object.entries(MACHINE_CHILD_TYPES) as [ProvisionerType, string][]) {
    if (Object.hasOwn(children, key)) served.add(type);
  }
  return served;
}

/** Why this controller keeps every child of a pool as it is instead of syncing it. */
export interface Hold {
  /** The label's problem, reported in Ready; without one the status is kept exactly as it was. */
  problem?: ProvisionerLabelProblem;
  /** The finalize hook's answer. */
  finalized?: boolean;
}

/**
 * When the calling controller must not sync the pool:
 * - the pool is the other provisioner's, reached through a label that contradicts the type (or a
 *   labelSelector edited by hand): every child it observes is kept as it is, the label reported,
 *   and finalize lets go (finalized) as soon as it is asked to;
 * - a finalize call without a deletion: the pool carries this controller's finalizer but stopped
 *   matching its labelSelector (the label was removed or changed by hand; Metacontroller's
 *   shouldCallFinalizeHook). GPU cells are not torn down for a label: everything is kept and the
 *   finalizer stays until the label is back (or kubecell.io/skip-cleanup=true lets go).
 */
export function holdOf(
  pool: GPUCellPool,
  children: ObjectMap,
  finalizing: boolean,
): Hold | undefined {
  const runs = controllerProvisioners(children);
  const problem = provisionerLabelProblem(pool);
  const reported = problem === undefined ? {} : { problem };
  if (runs.size > 0 && !runs.has(pool.spec.provisioner.type)) {
    return finalizing ? { ...reported, finalized: true } : reported;
  }
  if (finalizing && pool.metadata.deletionTimestamp === undefined) {
    return { ...reported, finalized: skipsCleanup(pool) };
  }
  return undefined;
}

/** The annotation `kubecell.io/skip-cleanup=true`: finalize lets go without cleaning up. */
export function skipsCleanup(pool: GPUCellPool): boolean {
  return pool.metadata.annotations?.[ANNOTATIONS.skipCleanup] === 'true';
}
