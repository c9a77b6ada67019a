/**
 * The kubecell-virtualcluster sync and finalize hooks, each a short list of phases.
 *
 * Sync: observe (observe.ts: every object narrowed to a type once; the validation layer checked
 * the rest) → assess (assess.ts: the placement, resolved once through the feasibility evaluation
 * of resolve.ts and never again; failures; the Cell's liveness; where the children go, chosen
 * once, and the state there of what Ready waits for: placement.ts) → render (render.ts: the
 * children the placement puts on the hub, from `status.resolved` only; without a snapshot the
 * observed children are returned as they are, so a missing input never deletes or changes one)
 * → status (sync-status.ts: the placement, endpoint and credential, and the conditions and phase
 * of status.ts, child-conditions.ts and work-conditions.ts). The status is returned whole; for
 * the same request and clock it is byte-identical.
 *
 * A stale copy of the VirtualCluster is answered 429 with Retry-After 1 (nothing changes;
 * Metacontroller retries then, without a SyncError event) rather than resolved again: see
 * `staleCopyEvidence` in resolve.ts.
 *
 * On a `delivery: ManifestWork` Cell (status.resolved.cell.delivery) the render phase returns
 * the kubeconfig Secret alone, and ChildrenApplied, K3kReady and KubeconfigPublished come from
 * the VirtualCluster's ManifestWork (work-placement.ts, work-conditions.ts).
 *
 * Finalize: observe the children (and, on a ManifestWork Cell, the ManifestWork: observe.ts
 * `observeDeletion`) → what remains (cleanup.ts) → status. It returns no children, lists what remains in `status.cleanup` and
 * answers `finalized: true` once nothing remains, or at once with the annotation
 * `kubecell.io/skip-cleanup=true`. It reads no spec field.
 */
import type { VirtualCluster } from '../generated/types/index.js';
import type { CompositeSyncRequest, CompositeSyncResponse } from '../metacontroller/protocol.js';
import { assessVirtualCluster } from './assess.js';
import { assessCleanup } from './cleanup.js';
import type { VirtualClusterConfig } from './config.js';
import { observeDeletion, observeVirtualCluster } from './observe.js';
import { renderVirtualCluster } from './render.js';
import { deletingStatus, syncStatus } from './sync-status.js';

export function syncVirtualCluster(
  request: CompositeSyncRequest<VirtualCluster>,
  config: VirtualClusterConfig,
  now: Date,
): CompositeSyncResponse {
  const vc = request.parent;
  const observation = observeVirtualCluster(vc, request.related, request.children, config);
  const assessment = assessVirtualCluster(vc, observation, config, now);
  const rendering = renderVirtualCluster(vc, assessment, observation);
  const outcome = { observation, assessment, rendering };
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
  const observation = observeDeletion(vc, request.related, request.children);
  const cleanup = assessCleanup(vc, observation.children, observation.work);
  const status = deletingStatus(vc.metadata.generation, observation.prior, cleanup, now);
  return {
    status,
    children: [],
    finalized: cleanup.finalized,
    ...(cleanup.finalized ? {} : { resyncAfterSeconds: config.resyncSeconds }),
  };
}
