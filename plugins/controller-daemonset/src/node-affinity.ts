import type { Affinity, Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec } from '@skiff/api';

/** The one node field a node selector term may match on. */
export const NODE_NAME_FIELD = 'metadata.name';

function requirementMatches(requirement: NodeSelectorRequirement, value: string | undefined): boolean {
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
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(values[0]!)) return false;
      const actual = Number(value);
      const bound = Number(values[0]);
      return requirement.operator === 'Gt' ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

/** A term matches when it says something and every expression (labels) and field requirement holds; an empty term matches nothing. */
function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  return (
    expressions.every((requirement) => requirementMatches(requirement, labels[requirement.key])) &&
    fields.every((requirement) => requirement.key === NODE_NAME_FIELD && requirementMatches(requirement, node.metadata.name))
  );
}

/** Whether a node satisfies a node selector: any one of its terms. */
export function nodeSelectorMatches(selector: NodeSelector, node: Node): boolean {
  return selector.nodeSelectorTerms.some((term) => termMatches(term, node));
}

/**
 * Whether a pod may run on a node by its `nodeSelector` and its required node affinity — what
 * kube-scheduler's NodeAffinity filter and the DaemonSet controller both check.
 */
export function podFitsNodeAffinity(spec: PodSpec, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  if (Object.entries(spec.nodeSelector ?? {}).some(([key, value]) => labels[key] !== value)) return false;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !required || nodeSelectorMatches(required, node);
}

/**
 * The affinity of a DaemonSet pod bound for `nodeName`: the required node affinity becomes one term
 * matching that node's name (the controller has already checked the rest); other affinities are kept.
 */
export function affinityForNode(affinity: Affinity | undefined, nodeName: string): Affinity {
  const required: NodeSelector = { nodeSelectorTerms: [{ matchFields: [{ key: NODE_NAME_FIELD, operator: 'In', values: [nodeName] }] }] };
  const copy = structuredClone(affinity ?? {});
  copy.nodeAffinity = { ...copy.nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: required };
  return copy;
}

/**
 * The node a DaemonSet pod belongs to: where it is bound, or, before the scheduler has bound it, the node
 * its required affinity names (`matchFields metadata.name In [node]`).
 */
export function targetNodeName(spec: PodSpec): string | undefined {
  if (spec.nodeName) return spec.nodeName;
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const field of term.matchFields ?? []) {
      if (field.key === NODE_NAME_FIELD && field.operator === 'In' && field.values?.length === 1) return field.values[0];
    }
  }
  return undefined;
}
