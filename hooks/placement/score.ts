/**
 * How much room a Cell would have left after a placement, read from the Cell's own feasibility
 * report (hooks/feasibility/evaluate.ts), so that the score and the checks never disagree.
 *
 * The score is the number of further VirtualClusters of the same class the Cell could still
 * take, in the class's scarcest resource: for each resource r that sets it,
 *
 *   (available_r − required_r) ÷ required_r
 *
 * and the score is the least of them. The resources that set it are the class's devices (the
 * extended resources its ResourceOffered checks name: a GPU is what a GPU tenant runs out of);
 * for a class without devices, every resource its Capacity checks measure. The ratio is unitless,
 * so a class that needs GPUs and RDMA devices is scored by whichever runs out first, and Cells of
 * different sizes compare fairly for the class at hand. It is exact (integer nanos) and rounded
 * down to thousandths, so the same report always gives the same score, byte for byte.
 */
import type { FeasibilityCheck } from '../generated/types/index.js';
import {
  formatQuantity,
  parseQuantity,
  QuantityError,
  subtractQuantities,
  type ParsedQuantity,
} from '../quantity/quantity.js';

/** What limits a Cell for a class: the scarcest resource and how many more would fit. */
export interface CellScore {
  /** Further VirtualClusters of the class that would still fit, in thousandths (2500 = 2.5). */
  milli: number;
  /** The resource that sets it. */
  resource: string;
  /** What of that resource is left after this placement, as a quantity. */
  left: string;
}

interface Headroom {
  resource: string;
  available: ParsedQuantity;
  required: ParsedQuantity;
}

/**
 * The score of an accepted Cell's report; undefined when no Capacity check measured a need
 * (a class that asks for nothing capacity-checked fits anywhere equally).
 */
export function scoreOf(checks: readonly FeasibilityCheck[]): CellScore | undefined {
  const devices = new Set(
    checks.filter((c) => c.name === 'ResourceOffered' && c.resource).map((c) => c.resource),
  );
  const measured = checks.flatMap((c) => headroomOf(c) ?? []);
  const scoring = measured.some((h) => devices.has(h.resource))
    ? measured.filter((h) => devices.has(h.resource))
    : measured;
  let best: CellScore | undefined;
  for (const headroom of scoring) {
    const { available, required } = headroom;
    const milli = Number(((available.nanos - required.nanos) * 1000n) / required.nanos);
    const tighter =
      best === undefined ||
      milli < best.milli ||
      (milli === best.milli && headroom.resource < best.resource);
    if (tighter) {
      best = {
        milli,
        resource: headroom.resource,
        left: formatQuantity(subtractQuantities(available, required)),
      };
    }
  }
  return best;
}

/** A passed Capacity check with a positive need, as exact nanos; undefined otherwise. */
function headroomOf(check: FeasibilityCheck): Headroom | undefined {
  if (check.name !== 'Capacity' || check.result !== 'Pass' || check.resource === undefined) {
    return undefined;
  }
  if (check.required === undefined || check.available === undefined) return undefined;
  try {
    const required = parseQuantity(check.required);
    const available = parseQuantity(check.available);
    if (required.nanos <= 0n) return undefined;
    return { resource: check.resource, available, required };
  } catch (err) {
    // The evaluation wrote these figures itself; a figure it could not have written scores
    // nothing rather than failing the placement.
    if (err instanceof QuantityError) return undefined;
    throw err;
  }
}

/** A score as users read it: `2.5`, `0`, `12.125`. */
export function formatScore(milli: number): string {
  const sign = milli < 0 ? '-' : '';
  const abs = Math.abs(milli);
  const whole = Math.floor(abs / 1000);
  const fraction = String(abs % 1000)
    .padStart(3, '0')
    .replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}
