/**
 * The reasons of the plan's own conditions, Evaluated and Expired; each key is its token. The
 * reasons of the feasibility checks are in hooks/feasibility/reasons.ts (shared with the
 * VirtualCluster controller).
 */
import { Decision } from '../feasibility/reasons.js';

export const REASONS = {
  /** Evaluated=True: the reason is the decision. */
  Accepted: Decision.Accepted,
  Rejected: Decision.Rejected,
  Unknown: Decision.Unknown,
  /** Expired=False. */
  NotExpired: 'NotExpired',
  /** Expired=True. */
  Expired: 'Expired',
} as const;
