import { nodeSelectorMatches as apiNodeSelectorMatches, type Node, type NodeSelector, type PersistentVolume, type TopologySelectorTerm } from '@skiff/api';
import { HOSTNAME_LABEL } from './names.js';

type Labels = Readonly<Record<string, string>> | undefined;

/** Whether a node selector's terms (ORed) match a node with these labels (and name, for matchFields): @skiff/api's matcher. */
export function nodeSelectorMatches(selector: NodeSelector, labels: Labels, nodeName = ''): boolean {
  const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, ...(labels ? { labels: { ...labels } } : {}) } };
  return apiNodeSelectorMatches(selector, node);
}

/**
 * Whether a volume may be used from a node with these labels: no required node affinity, or one that
 * matches. Only labels count, as upstream checks a volume's affinity (a node of labels alone: field requirements go unchecked).
 */
export function volumeFitsNode(volume: PersistentVolume, labels: Labels): boolean {
  const required = volume.spec.nodeAffinity?.required;
  return !required || nodeSelectorMatches(required, labels);
}

/** A StorageClass's allowedTopologies: no terms allow every node; else one term whose every expression the labels meet. */
export function topologyAllows(terms: readonly TopologySelectorTerm[] | undefined, labels: Labels): boolean {
  if (!terms || terms.length === 0) return true;
  return terms.some((term) => {
    const expressions = term.matchLabelExpressions ?? [];
    if (expressions.length === 0) return false;
    return expressions.every(({ key, values }) => labels?.[key] !== undefined && values.includes(labels[key]!));
  });
}

/**
 * The nodes a local volume is pinned to, by its `kubernetes.io/hostname In (…)` requirements: the union over
 * its terms of each term's intersection. Empty when the volume is not pinned that way (any node may do).
 */
export function hostnamesOfVolume(volume: PersistentVolume): string[] {
  const terms = volume.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  const result = new Set<string>();
  for (const term of terms) {
    let names: Set<string> | undefined;
    for (const { key, operator, values = [] } of term.matchExpressions ?? []) {
      if (key !== HOSTNAME_LABEL || operator !== 'In') continue;
      names = names ? new Set(values.filter((value) => names!.has(value))) : new Set(values);
    }
    for (const name of names ?? []) result.add(name);
  }
  return [...result];
}
