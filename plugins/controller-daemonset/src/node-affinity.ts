import { NODE_NAME_FIELD, type Affinity, type NodeSelector, type PodSpec } from '@skiff/api';

/**
 * The affinity of a DaemonSet pod bound for `nodeName`: the required node affinity becomes one term
 * matching that node's name (the controller has already checked the rest); other affinities are kept.
 */
export function affinityForNode(affinity: Affinity | undefined, nodeName: string): Affinity {
  const required: NodeSelector = { nodeSelectorTerms: [{ matchFields: [{ key: NODE_NAME_FIELD, operator: 'In', values: [nodeName] }] }] };
  const copy = structuredClone(affinity ?? {});
  copy.nodeAffinity = { ...{}, ...copy.nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: required };
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
