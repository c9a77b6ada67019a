/**
 * The kubecell-virtualcluster sync and finalize hooks, each a short list of phases.
 *
 * Sync: observe (observe.ts) → assess (assess.ts: the placement, resolved once through the
 * feasibility evaluation of resolve.ts and never again; failures; the Cell's liveness; what
 * Ready waits for; where the children go, chosen once: placement.ts) → render (the placement's
 * children: from `status.resolved` only; without a usable snapshot the observed children are
 * returned as they are, so a missing or malformed input never deletes or changes one) → status
 * (sync-status.ts: the placement, endpoint and credential, and the conditions and phase of
 * status.ts). The status is returned whole; for the same request and clock it is
 * byte-identical.
 *
 * A stale copy of the VirtualCluster is answered 429 with Retry-After 1 (nothing changes;
 * Metacontroller retries then, without a SyncError event) rather than resolved again: see
 * `staleCopyEvidence` in resolve.ts.
 *
 * On a `delivery: ManifestWork` Cell (status.resolved.cell.delivery) the render phase returns
 * the kubeconfig Secret alone, and ChildrenApplied, K3kReady and KubeconfigPublished come from
 * the VirtualCluster's ManifestWork (work-placement.ts).
 *
 * Finalize: observe the children (and, on a ManifestWork Cell, the ManifestWork) → what remains
 * (cleanup.ts) → status. It returns no children, lists what remains in `status.cleanup` and
 * answers `finalized: true` once nothing remains, or at once with the annotation
 * `kubecell.io/skip-cleanup=true`. It reads no spec field.
 */
import type { VirtualCluster } from '../generated/types/index.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import { assessVirtualCluster } from './assess.js';
import { assessCleanup } from './cleanup.js';
import type { VirtualClusterConfig } from './config.js';
import {
  observeOwnChildren,
  observeVirtualCluster,
  observeOwnWork,
  priorStatus,
} from './observe.js';
import { deletingStatus, syncStatus } from './sync-status.js';

export function syncVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const prior = priorStatus(vc);
  const observation = observeVirtualCluster(vc, request.related, request.children, config);
  const assessment = assessVirtualCluster(vc, prior, observation, config, now);
  const rendering = assessment.placement.render();
  const outcome = { prior, observation, assessment, rendering };
  const status = syncStatus(vc.metadata.generation, outcome, now);
  const settled = status.phase === 'Ready' || status.phase === 'Failed';
  return {
    status,
    children: rendering.children,
    ...(settled ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}

export function finalizeVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const prior = priorStatus(vc);
  const work = observeOwnWork(vc, prior.status.resolved, request.related);
  const cleanup = assessCleanup(vc, observeOwnChildren(vc, request.children), work);
  const status = deletingStatus(vc.metadata.generation, prior, cleanup, now);
  return {
    status,
    children: [],
    finalized: cleanup.finalized,
    ...(cleanup.finalized ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}
