import type { NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PersistentVolume, TopologySelectorTerm } from '@skiff/api';
import { HOSTNAME_LABEL } from './names.js';

type Labels = Readonly<Record<string, string>> | undefined;

const INTEGER = /^[+-]?\d+$/;

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
      // One integer on each side, or the requirement is invalid and matches nothing.
      if (value === undefined || values.length !== 1 || !INTEGER.test(value) || !INTEGER.test(values[0]!)) return false;
      const [have, bound] = [BigInt(value), BigInt(values[0]!)];
      return requirement.operator === 'Gt' ? have > bound : have < bound;
    }
    default:
      return false;
  }
}

/** A term matches when all its requirements do; a term with none matches nothing. `metadata.name` is the only field. */
function termMatches(term: NodeSelectorTerm, labels: Labels, nodeName: string): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  if (!expressions.every((requirement) => requirementMatches(requirement, labels?.[requirement.key]))) return false;
  return fields.every((requirement) => requirement.key === 'metadata.name' && requirementMatches(requirement, nodeName));
}

/** Whether a node selector's terms (ORed) match a node with these labels (and name, for matchFields). */
export function nodeSelectorMatches(selector: NodeSelector, labels: Labels, nodeName = ''): boolean {
  return selector.nodeSelectorTerms.some((term) => termMatches(term, labels, nodeName));
}

/**
 * Whether a volume may be used from a node with these labels: no required node affinity, or one that
 * matches. Only labels count, as upstream checks a volume's affinity (a `metadata.name` field never matches).
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
