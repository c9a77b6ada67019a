/**
 * The `spec.namespaceSelector` of Cells and VirtualNodeClasses: which host namespaces may use
 * them. A selector has the shape and the meaning of Kubernetes' metav1.LabelSelector
 * (`labels.Selector` of k8s.io/apimachinery): every `matchLabels` entry and every
 * `matchExpressions` requirement must hold, and an empty selector (`{}`) selects every
 * namespace. An absent selector restricts nothing (docs/design/decisions.md).
 *
 * Shared by the feasibility evaluation (check NamespaceAllowed) and the admission webhook, so
 * that both refuse exactly the same namespaces. The input is read defensively: the webhook hands
 * over objects as the apiserver returned them, and a selector that is not well formed (which the
 * CRD's schema and CEL rules prevent) selects nothing, as Kubernetes treats a selector it cannot
 * parse.
 */
import { isJsonObject } from '../json/json.js';

/** What a selector says about one namespace. */
export type SelectorVerdict =
  { kind: 'selected' } | { kind: 'notSelected' } | { kind: 'invalid'; problem: string };

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
type Operator = (typeof OPERATORS)[number];

interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

interface ParsedSelector {
  matchLabels: [string, string][];
  requirements: Requirement[];
}

/** The selector as data, or the first problem that makes it select nothing. */
function parseSelector(selector: unknown): ParsedSelector | string {
  if (!isJsonObject(selector)) return 'it is not an object';
  const parsed: ParsedSelector = { matchLabels: [], requirements: [] };
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && matchLabels !== null) {
    if (!isJsonObject(matchLabels)) return 'matchLabels is not a map';
    for (const [key, value] of Object.entries(matchLabels)) {
      if (typeof value !== 'string') return `matchLabels[${key}] is not a string`;
      parsed.matchLabels.push([key, value]);
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) return 'matchExpressions is not a list';
    for (const [index, expression] of matchExpressions.entries()) {
      const where = `matchExpressions[${index}]`;
      if (!isJsonObject(expression)) return `${where} is not an object`;
      const { key, operator, values } = expression;
      if (typeof key !== 'string' || key === '') return `${where}.key is missing`;
      if (!(OPERATORS as readonly unknown[]).includes(operator)) {
        return `${where}.operator ${JSON.stringify(operator)} is not one of ${OPERATORS.join(', ')}`;
      }
      const list = values === undefined || values === null ? [] : values;
      if (!Array.isArray(list) || list.some((value) => typeof value !== 'string')) {
        return `${where}.values is not a list of strings`;
      }
      const op = operator as Operator;
      if ((op === 'In' || op === 'NotIn') && list.length === 0) {
        return `${where}: ${op} needs at least one value`;
      }
      if ((op === 'Exists' || op === 'DoesNotExist') && list.length > 0) {
        return `${where}: ${op} takes no values`;
      }
      parsed.requirements.push({ key, operator: op, values: list as string[] });
    }
  }
  return parsed;
}

function holds(requirement: Requirement, labels: Readonly<Record<string, string>>): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  switch (requirement.operator) {
    case 'In':
      return present && value !== undefined && requirement.values.includes(value);
    case 'NotIn':
      return !present || value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
  }
}

/** Whether `selector` selects a namespace with these labels. */
export function evaluateSelector(
  selector: unknown,
  labels: Readonly<Record<string, string>>,
): SelectorVerdict {
  const parsed = parseSelector(selector);
  if (typeof parsed === 'string') return { kind: 'invalid', problem: parsed };
  const selected =
    parsed.matchLabels.every(
      ([key, value]) => Object.hasOwn(labels, key) && labels[key] === value,
    ) && parsed.requirements.every((requirement) => holds(requirement, labels));
  return { kind: selected ? 'selected' : 'notSelected' };
}

/** Longest selector text a message quotes; a selector may hold thousands of values. */
const MAX_SELECTOR_TEXT = 300;

/**
 * A selector written as kubectl writes one (`metav1.FormatLabelSelector`):
 * `team=research,tier in (gpu,npu),env notin (prod),owner,!legacy`; `{}` for the empty selector
 * (every namespace). Shortened to a few hundred characters.
 */
export function formatSelector(selector: unknown): string {
  const parsed = parseSelector(selector);
  if (typeof parsed === 'string') return `invalid: ${parsed}`;
  const terms = [
    ...parsed.matchLabels.map(([key, value]) => `${key}=${value}`),
    ...parsed.requirements.map(({ key, operator, values }) => {
      switch (operator) {
        case 'In':
          return `${key} in (${values.join(',')})`;
        case 'NotIn':
          return `${key} notin (${values.join(',')})`;
        case 'Exists':
          return key;
        case 'DoesNotExist':
          return `!${key}`;
      }
    }),
  ];
  const text = terms.length === 0 ? '{}' : terms.join(',');
  return text.length > MAX_SELECTOR_TEXT ? `${text.slice(0, MAX_SELECTOR_TEXT - 1)}…` : text;
}

/** An object whose `spec.namespaceSelector` may restrict the namespaces that use it. */
export interface NamespaceRule {
  /** `Cell cell1` or `VirtualNodeClass small`, as messages name it. */
  what: string;
  /** Its spec.namespaceSelector, when set. */
  selector: unknown;
}

export interface NamespaceRuleResult extends NamespaceRule {
  verdict: SelectorVerdict;
}

/** Each rule's verdict on a namespace with these labels. */
export function evaluateNamespaceRules(
  rules: readonly NamespaceRule[],
  labels: Readonly<Record<string, string>>,
): NamespaceRuleResult[] {
  return rules.map((rule) => ({ ...rule, verdict: evaluateSelector(rule.selector, labels) }));
}

/** `the namespaceSelector of Cell cell1 (tier in (gpu))`, or why it selects nothing. */
export function describeRule(rule: NamespaceRule | NamespaceRuleResult): string {
  if ('verdict' in rule && rule.verdict.kind === 'invalid') {
    return `the namespaceSelector of ${rule.what}, which is invalid (${rule.verdict.problem}) and so selects no namespace`;
  }
  return `the namespaceSelector of ${rule.what} (${formatSelector(rule.selector)})`;
}
