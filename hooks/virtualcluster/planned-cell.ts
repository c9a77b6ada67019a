/**
 * A VirtualCluster created from a plan (the annotation `kubecell.io/plan`, with
 * `spec.cellSelector`) lands on the Cell that plan chose while it still fits (D49): the plan's
 * choice is what the tenant was shown, and a VirtualCluster created right after it should not
 * land elsewhere because another Cell's score moved in between. The plan's Cell is only a
 * preference: it must be one the VirtualCluster's own selector matched and must accept the
 * placement now; otherwise the policy chooses, and `status.resolved.plan` says why.
 */
import type { PlanFollowed, VirtualCluster, VirtualClusterPlan } from '../generated/types/index.js';
import { ANNOTATIONS } from '../kube/labels.js';
import { isDnsSubdomain } from '../kube/objects.js';

/** What the VirtualCluster observed of the plan it names. */
export type ObservedPlan =
  { name: string; observed: false } | { name: string; observed: true; plan?: VirtualClusterPlan };

/** The plan the annotation names: a DNS subdomain, else none (nothing is related for it). */
export function plannedName(vc: VirtualCluster): string | undefined {
  if (vc.spec.cellSelector === undefined) return undefined;
  const name = vc.metadata.annotations?.[ANNOTATIONS.plan];
  return name !== undefined && isDnsSubdomain(name) ? name : undefined;
}

/**
 * The Cell a concluded, Accepted, unexpired plan of the current generation chose; undefined
 * with the reason otherwise.
 */
export function plannedCell(
  observed: ObservedPlan,
  now: Date,
): { cell: string } | { cell?: string; result: 'PlanNotAccepted' | 'PlanNotFound' } {
  if (!observed.observed || observed.plan === undefined) return { result: 'PlanNotFound' };
  const { plan } = observed;
  const cell = plan.status?.placement?.chosen?.name ?? plan.spec.cellRef?.name;
  const status = plan.status;
  const current = status?.observedGeneration === plan.metadata.generation;
  const expiresAt = status?.expiresAt === undefined ? NaN : Date.parse(status.expiresAt);
  const accepted = current && status?.decision === 'Accepted' && expiresAt > now.getTime();
  if (!accepted || cell === undefined) {
    return { ...(cell === undefined ? {} : { cell }), result: 'PlanNotAccepted' };
  }
  return { cell };
}

/** What resolution records of the plan, once a Cell is chosen. */
export function planOutcome(
  name: string,
  planned: ReturnType<typeof plannedCell>,
  matched: readonly string[],
  chosen: string,
): PlanFollowed {
  const cell = planned.cell === undefined ? {} : { cell: planned.cell };
  if ('result' in planned) return { name, ...cell, result: planned.result };
  if (chosen === planned.cell) return { name, ...cell, result: 'Followed' };
  return {
    name,
    ...cell,
    result: matched.includes(planned.cell) ? 'CellNoLongerFits' : 'CellNotMatched',
  };
}
