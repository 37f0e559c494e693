// Node selectors and node affinity as kube-scheduler's NodeAffinity plugin and the DaemonSet controller
// match them (Kubernetes' component-helpers nodeaffinity rules).
import type { Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec, PreferredSchedulingTerm } from './generated/types.js';
import { labelKeyErrors, labelValueErrors } from './labels.js';

/** The one node field a node selector term may match on. */
export const NODE_NAME_FIELD = 'metadata.name';

const LABEL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const FIELD_OPERATORS = ['In', 'NotIn'];
const INTEGER = /^[+-]?\d+$/;

const quoted = (values: readonly string[] | undefined) => JSON.stringify(values ?? []);

function labelRequirementErrors(requirement: NodeSelectorRequirement, path: string): string[] {
  const { key, operator } = requirement;
  const values = requirement.values ?? [];
  if (!LABEL_OPERATORS.includes(operator)) {
    return [
      `${path}.operator: Unsupported value: ${JSON.stringify(operator)}: supported values: ${LABEL_OPERATORS.map((op) => JSON.stringify(op)).join(', ')}`,
    ];
  }
  const problems = labelKeyErrors(key).map((problem) => `${path}.key: Invalid value: ${JSON.stringify(key)}: ${problem}`);
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) problems.push(`${path}.values: Required value: for 'in', 'notin' operators, values set can't be empty`);
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) problems.push(`${path}.values: Forbidden: values set must be empty for exists and does not exist`);
      break;
    default:
      if (values.length !== 1) problems.push(`${path}.values: Required value: for 'Gt', 'Lt' operators, exactly one value is required`);
      else if (!INTEGER.test(values[0]!))
        problems.push(`${path}.values[0]: Invalid value: ${JSON.stringify(values[0])}: for 'Gt', 'Lt' operators, the value must be an integer`);
  }
  if (operator !== 'Gt' && operator !== 'Lt') {
    values.forEach((value, i) => {
      for (const problem of labelValueErrors(value)) problems.push(`${path}.values[${i}]: Invalid value: ${JSON.stringify(value)}: ${problem}`);
    });
  }
  return problems;
}

function fieldRequirementErrors(requirement: NodeSelectorRequirement, path: string): string[] {
  if (!FIELD_OPERATORS.includes(requirement.operator)) {
    return [`${path}.operator: Unsupported value: ${JSON.stringify(requirement.operator)}: supported values: "In", "NotIn"`];
  }
  if (requirement.values?.length !== 1) return [`${path}.values: Invalid value: ${quoted(requirement.values)}: must have one element`];
  return [];
}

/** Why Kubernetes could not parse a node selector term (a term with errors matches no node); empty when valid. */
export function nodeSelectorTermErrors(term: NodeSelectorTerm, path = ''): string[] {
  const at = (child: string, i: number) => `${path ? `${path}.` : ''}${child}[${i}]`;
  return [
    ...(term.matchExpressions ?? []).flatMap((requirement, i) => labelRequirementErrors(requirement, at('matchExpressions', i))),
    ...(term.matchFields ?? []).flatMap((requirement, i) => fieldRequirementErrors(requirement, at('matchFields', i))),
  ];
}

/** Why a node selector is invalid, term by term; empty terms are ignored, as Kubernetes does. */
export function nodeSelectorErrors(selector: NodeSelector, path = ''): string[] {
  return selector.nodeSelectorTerms.flatMap((term, i) =>
    isEmptyTerm(term) ? [] : nodeSelectorTermErrors(term, `${path ? `${path}.` : ''}nodeSelectorTerms[${i}]`),
  );
}

/** Why preferred scheduling terms are invalid; terms of weight 0 and empty terms are ignored, as Kubernetes does. */
export function preferredSchedulingTermsErrors(terms: readonly PreferredSchedulingTerm[], path = ''): string[] {
  return terms.flatMap((term, i) => (term.weight === 0 || isEmptyTerm(term.preference) ? [] : nodeSelectorTermErrors(term.preference, `${path}[${i}]`)));
}

function isEmptyTerm(term: NodeSelectorTerm): boolean {
  return (term.matchExpressions?.length ?? 0) === 0 && (term.matchFields?.length ?? 0) === 0;
}

function labelMatches(requirement: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default: {
      if (value === undefined || !INTEGER.test(value)) return false;
      const actual = BigInt(value);
      const bound = BigInt(values[0]!);
      return requirement.operator === 'Gt' ? actual > bound : actual < bound;
    }
  }
}

// Terms are checked once each: a pod's terms are matched against every node.
const validity = new WeakMap<NodeSelectorTerm, boolean>();
function isValidTerm(term: NodeSelectorTerm): boolean {
  let valid = validity.get(term);
  if (valid === undefined) validity.set(term, (valid = nodeSelectorTermErrors(term).length === 0));
  return valid;
}

/** A node's selectable fields: only its name, when it has one. */
function fieldMatches(requirement: NodeSelectorRequirement, node: Node): boolean {
  const value = requirement.key === NODE_NAME_FIELD ? (node.metadata.name ?? '') : '';
  const equal = value === requirement.values![0];
  return requirement.operator === 'In' ? equal : !equal;
}

/**
 * Whether a node satisfies one term: every label expression and every field requirement holds. An empty
 * term, or one Kubernetes could not parse (see nodeSelectorTermErrors), matches no node.
 */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: Node): boolean {
  if (isEmptyTerm(term) || !isValidTerm(term)) return false;
  const labels = node.metadata.labels ?? {};
  if (!(term.matchExpressions ?? []).every((requirement) => labelMatches(requirement, labels[requirement.key]))) return false;
  // Kubernetes skips the field requirements of a node without a name.
  return !node.metadata.name || (term.matchFields ?? []).every((requirement) => fieldMatches(requirement, node));
}

/** Whether a node satisfies a node selector: any one of its terms (none: no node). */
export function nodeSelectorMatches(selector: NodeSelector, node: Node): boolean {
  return selector.nodeSelectorTerms.some((term) => nodeSelectorTermMatches(term, node));
}

/** Whether a node's labels hold every `key: value` of a pod's `spec.nodeSelector`. */
export function nodeLabelsMatch(nodeSelector: Readonly<Record<string, string>> | undefined, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const key in nodeSelector) if (labels[key] !== nodeSelector[key]) return false;
  return true;
}

/**
 * Whether a pod may run on a node by its `nodeSelector` and its required node affinity — what
 * kube-scheduler's NodeAffinity filter and the DaemonSet controller both check.
 */
export function podFitsNodeAffinity(spec: PodSpec, node: Node): boolean {
  if (!nodeLabelsMatch(spec.nodeSelector, node)) return false;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !required || nodeSelectorMatches(required, node);
}

/**
 * The sum of the weights of the preferred terms a node matches (the raw NodeAffinity score). Terms of
 * weight 0, empty terms and terms Kubernetes could not parse count nothing.
 */
export function preferredNodeAffinityScore(terms: readonly PreferredSchedulingTerm[] | undefined, node: Node): number {
  let score = 0;
  for (const term of terms ?? []) if (term.weight !== 0 && nodeSelectorTermMatches(term.preference, node)) score += term.weight;
  return score;
}
