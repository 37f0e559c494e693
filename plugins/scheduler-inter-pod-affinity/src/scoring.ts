import type { Labels, Node, Pod } from '@skiff/api';
import type { SchedulerSnapshot } from '@skiff/kernel';
import { MAX_NODE_SCORE } from '@skiff/scheduler';
import { placedPreferences, podsSelectedBy } from './node-questions.js';
import { podIdentityKey, termSelectionKey, type PodTerms } from './terms.js';
import { TopologyCounts } from './topology-counts.js';

export interface ScoringInput {
  pod: Pod;
  /** The incoming pod's preferred terms, namespaceSelectors already turned into namespace names. */
  terms: Pick<PodTerms, 'preferredAffinity' | 'preferredAntiAffinity'>;
  namespaceLabels: Labels | undefined;
  hardPodAffinityWeight: number;
}

/**
 * The score of every topology domain for the incoming pod: each placed pod its preferred terms select adds
 * (affinity) or takes away (anti-affinity) the term's weight in its node's domains; each placed pod whose
 * own terms select the incoming pod does the same (required affinity at hardPodAffinityWeight). When the
 * pod has no preferred terms, only pods with terms of their own can score, so only nodes holding such
 * pods are visited. Per-node answers are remembered until the node changes (node-memo).
 */
export function topologyScores(input: ScoringInput, snapshot: SchedulerSnapshot): TopologyCounts {
  const { pod, terms, namespaceLabels, hardPodAffinityWeight } = input;
  const scores = new TopologyCounts();
  const own = [
    ...terms.preferredAffinity.map((term) => ({ term, weight: term.weight, key: termSelectionKey(term) })),
    ...terms.preferredAntiAffinity.map((term) => ({ term, weight: -term.weight, key: termSelectionKey(term) })),
  ];
  const identity = podIdentityKey(pod, namespaceLabels);
  for (const info of own.length > 0 ? snapshot.nodes : snapshot.nodesWithAffinityPods) {
    const node = info.node;
    if (!hasLabels(node)) continue;
    for (const { term, weight, key } of own) {
      const count = podsSelectedBy(info, term, key);
      if (count > 0) scores.add(node, term.topologyKey, weight * count);
    }
    if ((info.podsWithAffinity?.length ?? 0) === 0) continue;
    for (const { topologyKey, weight } of placedPreferences(info, pod, namespaceLabels, identity, hardPodAffinityWeight)) scores.add(node, topologyKey, weight);
  }
  return scores;
}

function hasLabels(node: Node): boolean {
  for (const _ in node.metadata.labels) return true;
  return false;
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
