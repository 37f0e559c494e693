import type { Labels, Pod } from '@skiff/api';
import type { NodeInfo } from '@skiff/kernel';
import { memoized } from './node-memo.js';
import { existingPodTerms, matchesAllTerms, termMatches, termSelectionKey, type AffinityTerm } from './terms.js';

// What preFilter and preScore ask of every node, each answer remembered until the node changes.

const NOTHING: readonly never[] = Object.freeze([]);

/** How many of the node's pods `term` (an incoming pod's, namespaces resolved) selects. */
export function podsSelectedBy(info: NodeInfo, term: AffinityTerm, key = termSelectionKey(term)): number {
  return memoized(info, `one:${key}`, () => {
    let count = 0;
    for (const other of info.pods) if (termMatches(term, other, undefined)) count++;
    return count;
  });
}

/** How many of the node's pods every one of `terms` selects; `key` is `allSelectedKey(terms)`. */
export function podsSelectedByAll(info: NodeInfo, terms: readonly AffinityTerm[], key: string): number {
  return memoized(info, key, () => {
    let count = 0;
    for (const other of info.pods) if (matchesAllTerms(terms, other)) count++;
    return count;
  });
}

export function allSelectedKey(terms: readonly AffinityTerm[]): string {
  return `all:${terms.map(termSelectionKey).join(';')}`;
}

/** The topology keys of the node's placed pods' required anti-affinity terms that select `incoming`. */
export function placedAntiAffinityKeys(info: NodeInfo, incoming: Pod, namespaceLabels: Labels | undefined, identity: string): readonly string[] {
  return memoized(info, `placed-anti:${identity}`, () => {
    let keys: string[] | undefined;
    for (const other of info.podsWithRequiredAntiAffinity ?? []) {
      for (const term of existingPodTerms(other).requiredAntiAffinity) if (termMatches(term, incoming, namespaceLabels)) (keys ??= []).push(term.topologyKey);
    }
    return keys ?? NOTHING;
  });
}

/** A topology key and the weight a placed pod's term gives its domain for the incoming pod. */
export interface WeightedKey {
  topologyKey: string;
  weight: number;
}

/**
 * What the node's placed pods' own terms give the incoming pod: +hardPodAffinityWeight for each required
 * affinity term selecting it, +weight / −weight for each preferred affinity / anti-affinity term selecting it.
 */
export function placedPreferences(
  info: NodeInfo,
  incoming: Pod,
  namespaceLabels: Labels | undefined,
  identity: string,
  hardPodAffinityWeight: number,
): readonly WeightedKey[] {
  return memoized(info, `placed-score:${hardPodAffinityWeight}:${identity}`, () => {
    let found: WeightedKey[] | undefined;
    const add = (term: AffinityTerm, weight: number) => {
      if (weight !== 0 && termMatches(term, incoming, namespaceLabels)) (found ??= []).push({ topologyKey: term.topologyKey, weight });
    };
    for (const other of info.podsWithAffinity ?? []) {
      const theirs = existingPodTerms(other);
      if (hardPodAffinityWeight > 0) for (const term of theirs.requiredAffinity) add(term, hardPodAffinityWeight);
      for (const term of theirs.preferredAffinity) add(term, term.weight);
      for (const term of theirs.preferredAntiAffinity) add(term, -term.weight);
    }
    return found ?? NOTHING;
  });
}
