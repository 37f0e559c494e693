import type { Labels, Node, Pod } from '@skiff/api';
import type { SchedulerSnapshot } from '@skiff/kernel';
import { MAX_NODE_SCORE } from '@skiff/scheduler';
import { existingPodTerms, termMatches, type AffinityTerm, type PodTerms, type WeightedAffinityTerm } from './terms.js';
import { TopologyCounts } from './topology-counts.js';

export interface ScoringInput {
  pod: Pod;
  /** The incoming pod's preferred terms, namespaceSelectors already turned into namespace names. */
  terms: Pick<PodTerms, 'preferredAffinity' | 'preferredAntiAffinity'>;
  namespaceLabels: Labels | undefined;
  hardPodAffinityWeight: number;
}

function addIfMatches(scores: TopologyCounts, term: AffinityTerm, weight: number, pod: Pod, namespaceLabels: Labels | undefined, node: Node): void {
  if (termMatches(term, pod, namespaceLabels)) scores.add(node, term.topologyKey, weight);
}

function addWeighted(
  scores: TopologyCounts,
  terms: readonly WeightedAffinityTerm[],
  sign: 1 | -1,
  pod: Pod,
  namespaceLabels: Labels | undefined,
  node: Node,
): void {
  for (const term of terms) addIfMatches(scores, term, sign * term.weight, pod, namespaceLabels, node);
}

/**
 * What one placed pod adds to the score of its node's topology domains: the incoming pod's preferred
 * terms that select it (+weight for affinity, −weight for anti-affinity), and its own terms that select
 * the incoming pod (required affinity at hardPodAffinityWeight, preferred ones at their weight).
 */
function scoreExistingPod(scores: TopologyCounts, input: ScoringInput, existing: Pod, node: Node): void {
  const { pod, terms, namespaceLabels, hardPodAffinityWeight } = input;
  addWeighted(scores, terms.preferredAffinity, 1, existing, undefined, node);
  addWeighted(scores, terms.preferredAntiAffinity, -1, existing, undefined, node);
  const theirs = existingPodTerms(existing);
  if (hardPodAffinityWeight > 0) {
    for (const term of theirs.requiredAffinity) addIfMatches(scores, term, hardPodAffinityWeight, pod, namespaceLabels, node);
  }
  addWeighted(scores, theirs.preferredAffinity, 1, pod, namespaceLabels, node);
  addWeighted(scores, theirs.preferredAntiAffinity, -1, pod, namespaceLabels, node);
}

/**
 * The score of every topology domain for the incoming pod. When the pod has no preferred terms, only
 * pods with terms of their own can score, so only nodes holding such pods are visited.
 */
export function topologyScores(input: ScoringInput, snapshot: SchedulerSnapshot): TopologyCounts {
  const scores = new TopologyCounts();
  const own = input.terms.preferredAffinity.length > 0 || input.terms.preferredAntiAffinity.length > 0;
  for (const info of own ? snapshot.nodes : snapshot.nodesWithAffinityPods) {
    const node = info.node;
    if (!node.metadata.labels || Object.keys(node.metadata.labels).length === 0) continue;
    for (const existing of own ? info.pods : (info.podsWithAffinity ?? [])) scoreExistingPod(scores, input, existing, node);
  }
  return scores;
}

/**
 * Scales raw scores (negative for anti-affinity) so the lowest becomes 0 and the highest MAX_NODE_SCORE,
 * with upstream's arithmetic (the fraction first, then truncated), so equal inputs give equal scores.
 */
export function normalizeMinMax(scores: Map<string, number>): void {
  let min = Infinity;
  let max = -Infinity;
  for (const value of scores.values()) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const spread = max - min;
  for (const [name, value] of scores) scores.set(name, spread > 0 ? Math.trunc(MAX_NODE_SCORE * ((value - min) / spread)) : 0);
}
