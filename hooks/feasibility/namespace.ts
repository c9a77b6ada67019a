/**
 * The checks on the target namespace: NamespaceAllowed (the namespaceSelector of the Cell and
 * of the class select it) and NamespaceAvailable (it is a host namespace and hosts no other
 * VirtualCluster).
 */
import type { FeasibilityCheck } from '../generated/types/index.js';
import { LABELS } from '../kube/labels.js';
import { check } from './check.js';
import type { FeasibilityInput } from './evaluate.js';
import { describeRule, evaluateNamespaceRules, type NamespaceRule } from './namespace-selector.js';
import { Reason } from './reasons.js';
import { compareStrings } from '../json/compare.js';

/**
 * The namespaceSelector of the Cell and of the class, when either sets one: both must select the
 * target namespace. Without a selector nothing is restricted and no check is reported, so the
 * reports of placements without selectors are what they were before selectors existed.
 */
export function checkNamespaceAllowed(input: FeasibilityInput): FeasibilityCheck | undefined {
  const { cell, virtualNodeClass, namespace, namespaceLabels } = input;
  const rules: NamespaceRule[] = [];
  if (cell?.spec?.namespaceSelector !== undefined) {
    rules.push({ what: `Cell ${input.cellName}`, selector: cell.spec.namespaceSelector });
  }
  if (virtualNodeClass?.spec?.namespaceSelector !== undefined) {
    rules.push({
      what: `VirtualNodeClass ${input.className}`,
      selector: virtualNodeClass.spec.namespaceSelector,
    });
  }
  if (rules.length === 0) return undefined;
  if (namespaceLabels === undefined) {
    return check(
      'NamespaceAllowed',
      'Unknown',
      Reason.NamespaceLabelsUnknown,
      `Namespace ${namespace} was not observed, so ${rules.map(describeRule).join(' and ')} cannot be checked against its labels; the check runs again once the Namespace is observed.`,
    );
  }
  const results = evaluateNamespaceRules(rules, namespaceLabels);
  const refused = results.filter((result) => result.verdict.kind !== 'selected');
  if (refused.length > 0) {
    const them = refused.length === 1 ? refused[0]?.what : 'them';
    return check(
      'NamespaceAllowed',
      'Fail',
      Reason.NamespaceNotAllowed,
      `Namespace ${namespace} is not allowed by ${refused.map(describeRule).join(' and ')}: the platform team restricts which namespaces may use ${them}. Use a Cell and a VirtualNodeClass whose namespaceSelector selects ${namespace}, or ask the platform team to label the namespace or widen the selector.`,
    );
  }
  return check(
    'NamespaceAllowed',
    'Pass',
    Reason.NamespaceAllowed,
    `Namespace ${namespace} is selected by ${results.map(describeRule).join(' and ')}.`,
  );
}

export function checkNamespaceAvailable(input: FeasibilityInput): FeasibilityCheck {
  const { namespace, namespaceLabels } = input;
  if (namespaceLabels !== undefined && namespaceLabels[LABELS.hostNamespace] !== 'true') {
    return check(
      'NamespaceAvailable',
      'Fail',
      Reason.NotHostNamespace,
      `Namespace ${namespace} is not a host namespace: it lacks the label ${LABELS.hostNamespace}=true, which the platform team sets (kubectl label namespace ${namespace} ${LABELS.hostNamespace}=true).`,
    );
  }
  const hosted = input.virtualClusters
    .filter((vc) => vc.metadata.namespace === namespace)
    .map((vc) => vc.metadata.name)
    .sort(compareStrings);
  if (hosted.length > 0) {
    const shown = hosted.slice(0, 10).join(', ') + (hosted.length > 10 ? ', …' : '');
    return check(
      'NamespaceAvailable',
      'Fail',
      Reason.NamespaceOccupied,
      `Namespace ${namespace} already hosts VirtualCluster ${shown}; a namespace hosts at most one. Use another namespace.`,
    );
  }
  return check(
    'NamespaceAvailable',
    'Pass',
    Reason.NamespaceAvailable,
    `Namespace ${namespace} hosts no VirtualCluster.`,
  );
}
