/**
 * Where a VirtualCluster's children go, behind one small interface that assess chooses once
 * (assess.ts `placementOf`), so that no later phase asks again which kind of Cell it is:
 *
 * - local-placement.ts: Metacontroller applies the children on the hub (a `Local` Cell, and any
 *   VirtualCluster not resolved yet, whose observed children are kept as they are);
 * - work-placement.ts: kubecell-delivery carries them in the VirtualCluster's ManifestWork to
 *   the Cell's managed cluster, and the hub learns of them only through the work's status.
 *
 * Each answers what a sync needs of it: the state of what Ready waits for (`children`), the
 * children the sync returns (`render`, the render phase) and the conditions on them
 * (`conditions`, the status phase, given what `render` returned).
 */
import type { ResolvedPlacement } from '../generated/types/index.js';
import { endpointUrl } from './kubeconfig.js';
import { secretPointsAt } from './kubeconfig-secret.js';
import type { SecretObject } from './observe.js';
import type { Verdict } from './status.js';
import type { Rendering } from './render.js';

/** The state of the children that Ready waits for. */
export interface ChildrenState {
  /** The NodePort allocated to the API Service; only once resolved. */
  port?: number;
  /** `https://<endpoint address>:<port>`, once both are known. */
  url?: string;
  /** The kubeconfig Secret points at `url`. */
  published: boolean;
  /** The ResourceQuota reports a non-empty `status.hard` (not seen on a ManifestWork Cell). */
  quotaInPlace: boolean;
}

/**
 * The state of the children, wherever they are: the NodePort (known only once resolved), the
 * endpoint URL built from it, whether the published Secret points at that URL, and whether the
 * quota is in force.
 */
export function childrenAt(
  resolved: ResolvedPlacement | undefined,
  port: number | undefined,
  secret: SecretObject | undefined,
  quotaInPlace: boolean,
): ChildrenState {
  if (resolved === undefined || port === undefined) return { published: false, quotaInPlace };
  const url = endpointUrl(resolved.endpointAddress, port);
  return { port, url, published: secretPointsAt(secret, url), quotaInPlace };
}

/** ChildrenApplied, K3kReady, KubeconfigPublished and what Ready waits for among them. */
export interface ChildConditions {
  applied: Verdict;
  k3k: Verdict;
  kubeconfig: Verdict;
  /** What Ready still waits for, in words; empty when nothing. */
  missing: string[];
  /** Ready's message once nothing is missing, when it is not the local one. */
  readyMessage?: string;
}

export interface Placement<R extends Rendering = Rendering> {
  readonly children: ChildrenState;
  render(): R;
  // A method, not a function-valued property: a placement that always renders (R narrower than
  // Rendering) is still a Placement, and only ever gets back what its own render returned.
  conditions(rendering: R): ChildConditions;
}
