/**
 * A plan with `spec.cellSelector`: the Cells it matches, read from the placement index (one
 * ConfigMap holding what a placement reads of every Cell, hooks/api/placement-index.ts, D50),
 * each evaluated as a plan naming it would be, one chosen by `spec.placementPolicy`
 * (hooks/placement/select.ts, D48). `placement` says which Cells were weighed and why.
 */
import type { ConfigMapObject } from '../api/cell-liveness-record.js';
import {
  PLACEMENT_INDEX_NAME,
  PLACEMENT_INDEX_SOURCE_NAME,
  readPlacementIndex,
  type PlacementIndexContents,
} from '../api/placement-index.js';
import { check } from '../feasibility/check.js';
import { evaluateFeasibility, type FeasibilityResult } from '../feasibility/evaluate.js';
import { evaluateSelector } from '../feasibility/namespace-selector.js';
import { Reason } from '../feasibility/reasons.js';
import type {
  CellSelector,
  FeasibilityCheck,
  PlacementReport,
  VirtualClusterPlan,
} from '../generated/types/index.js';
import { TYPE_KEYS } from '../kube/objects.js';
import { findObject, type ObjectMap } from '../metacontroller/protocol.js';
import { selectCell, selectNothing, type SelectionRequest } from '../placement/select.js';
import type { PlanConfig } from './config.js';
import { planInput } from './input.js';

export interface SelectionResult extends FeasibilityResult {
  placement: PlacementReport;
}

export function evaluateSelection(
  plan: VirtualClusterPlan,
  related: ObjectMap,
  config: PlanConfig,
  now: Date,
): SelectionResult {
  const selector = plan.spec.cellSelector ?? {};
  const request: SelectionRequest = {
    cells: [],
    selector,
    policy: plan.spec.placementPolicy,
    cellNamespace: config.cellNamespace,
    evaluatedAgain: 'the plan is evaluated again when a Cell is created or labelled to match.',
    evaluate: (cell) => evaluateFeasibility(planInput(plan, related, config, now, { cell })),
  };
  const index = placementIndexOf(related, config.cellNamespace);
  const { decision, checks, report } =
    'unavailable' in index
      ? selectNothing(request, index.unavailable)
      : selectCell({ ...request, ...matching(index, selector) });
  return { decision, checks, placement: report };
}

/** The Cells of the index the selector matches, and the unreadable entries it may match. */
function matching(
  index: PlacementIndexContents,
  selector: CellSelector,
): Pick<SelectionRequest, 'cells' | 'unreadable'> {
  const matches = (labels: Record<string, string> | undefined) =>
    evaluateSelector(selector, labels ?? {}).kind === 'selected';
  return {
    cells: index.cells.filter((cell) => matches(cell.metadata.labels)),
    // An entry whose labels cannot be read either may match: it is left out, undecided.
    unreadable: index.unreadable.filter(
      (entry) => entry.labels === undefined || matches(entry.labels),
    ),
  };
}

/** The index's contents, or the CellFound check saying why no Cell can be weighed. */
function placementIndexOf(
  related: ObjectMap,
  cellNamespace: string,
): PlacementIndexContents | { unavailable: FeasibilityCheck } {
  const where = `${cellNamespace}/${PLACEMENT_INDEX_NAME}`;
  const configMap = findObject<ConfigMapObject>(
    related,
    TYPE_KEYS.configMap,
    PLACEMENT_INDEX_NAME,
    cellNamespace,
  );
  if (configMap === undefined) {
    // No ConfigMap group at all: Metacontroller's customize answer predates the index rule
    // (it keeps one up to 20 minutes per plan generation).
    const absence =
      related[TYPE_KEYS.configMap] === undefined ? 'was not observed' : 'does not exist';
    return {
      unavailable: check(
        'CellFound',
        'Unknown',
        Reason.PlacementIndexMissing,
        `The placement index ConfigMap ${where} ${absence}, so no Cell can be weighed: the kubecell-placement-index controller writes it as the attachment of the ConfigMap ${cellNamespace}/${PLACEMENT_INDEX_SOURCE_NAME} (metacontroller/placement-index-source.yaml); the plan is evaluated again when the index appears.`,
      ),
    };
  }
  const contents = readPlacementIndex(configMap, cellNamespace);
  if ('invalid' in contents) {
    return {
      unavailable: check(
        'CellFound',
        'Unknown',
        Reason.PlacementIndexUnreadable,
        `The placement index ConfigMap ${where} cannot be read (${contents.invalid}); the kubecell-placement-index controller writes it anew when a Cell changes, or delete it to have it rewritten now.`,
      ),
    };
  }
  return contents;
}
