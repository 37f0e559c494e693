// A private stand-in until @skiff/api carries the shared node-affinity matcher (podFitsNodeAffinity).
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, PodSpec } from '@skiff/api';

const INTEGER = /^-?\d+$/;

function requirementHolds({ operator, values = [] }: NodeSelectorRequirement, value: string | undefined): boolean {
  switch (operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt':
      if (value === undefined || values.length !== 1 || !INTEGER.test(value) || !INTEGER.test(values[0]!)) return false;
      return operator === 'Gt' ? Number(value) > Number(values[0]) : Number(value) < Number(values[0]);
    default:
      return false;
  }
}

/** A term holds when it has requirements and all of them do; the only field a term may name is `metadata.name`. */
function termHolds(term: NodeSelectorTerm, node: Node): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  const labels = node.metadata.labels ?? {};
  return (
    expressions.every((r) => requirementHolds(r, Object.hasOwn(labels, r.key) ? labels[r.key] : undefined)) &&
    fields.every((r) => r.key === 'metadata.name' && requirementHolds(r, node.metadata.name))
  );
}

/** The pod's `nodeSelector` and required node affinity both hold on the node (what the NodeAffinity filter checks). */
export function podFitsNodeAffinity(spec: PodSpec, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [key, value] of Object.entries(spec.nodeSelector ?? {})) if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  const required = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !required || required.nodeSelectorTerms.some((term) => termHolds(term, node));
}
