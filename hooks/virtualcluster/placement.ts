/**
 * Where a VirtualCluster's children go, chosen once in assess (assess.ts `placementOf`), and
 * what is known of them there; the later phases read it and ask nothing again:
 *
 * - on the hub (local-placement.ts): Metacontroller applies the children (a `Local` Cell, and any
 *   VirtualCluster not resolved yet, whose observed children are kept as they are);
 * - through the work (work-placement.ts): kubecell-delivery carries them in the VirtualCluster's
 *   ManifestWork to the Cell's managed cluster, the hub renders the kubeconfig Secret alone and
 *   learns of the rest only through the work's status.
 *
 * Render renders the children a placement puts on the hub (render.ts); status words the
 * conditions on them where they are (child-conditions.ts, work-conditions.ts).
 */
import type { ResolvedPlacement } from '../generated/types/index.js';
import { endpointUrl } from './kubeconfig.js';
import type { SecretKubeconfig } from './kubeconfig-secret.js';
import type { PublishedSecret } from './observe-children.js';
import type { FedBackKubeconfig, WorkFeedback } from './work-feedback.js';
import type { WorkRef } from './work-ref.js';

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

interface Placed {
  children: ChildrenState;
  /**
   * k3k's admin kubeconfig, read, that the kubeconfig Secret is published from: its Secret on the
   * hub, or as the work fed it back sealed, opened; undefined while there is none.
   */
  source?: SecretKubeconfig;
}

export interface HubPlacement extends Placed {
  where: 'hub';
}

export interface WorkPlacement extends Placed {
  where: 'work';
  work: WorkState;
}

export type Placement = HubPlacement | WorkPlacement;

/** The VirtualCluster's ManifestWork, as its placement reads it. */
export interface WorkState {
  /** The work's namespace (the ManagedCluster's) and name (`kubecell-vc-<uid>`). */
  ref: WorkRef;
  /** ManifestWorks were in the request (customize relates them); false: not observed. */
  observed: boolean;
  /** What the work feeds back; undefined while it does not exist. */
  feedback?: WorkFeedback;
  /** The ConfigMap (in the host namespace on the managed cluster) whose `data.sealed` is fed back. */
  sealedConfigMap: string;
  /** The kubeconfig fed back sealed (absent while the work is). */
  kubeconfig: FedBackKubeconfig;
}

/**
 * The state of the children, wherever they are: the NodePort (known only once resolved), the
 * endpoint URL built from it, whether the published Secret points at that URL, and whether the
 * quota is in force.
 */
export function childrenAt(
  resolved: ResolvedPlacement | undefined,
  port: number | undefined,
  secret: PublishedSecret | undefined,
  quotaInPlace: boolean,
): ChildrenState {
  if (resolved === undefined || port === undefined) return { published: false, quotaInPlace };
  const url = endpointUrl(resolved.endpointAddress, port);
  const servers = secret?.servers;
  const published = servers !== undefined && servers.every((server) => server === url);
  return { port, url, published, quotaInPlace };
}
