import type { Labels, Node, Pod } from '@skiff/api';
import type { ClonableStateData, NodeInfo, SchedulerSnapshot } from '@skiff/kernel';
import { allSelectedKey, placedAntiAffinityKeys, podsSelectedBy, podsSelectedByAll } from './node-questions.js';
import { existingPodTerms, matchesAllTerms, podIdentityKey, termMatches, termSelectionKey, type AffinityTerm, type PodTerms } from './terms.js';
import { TopologyCounts } from './topology-counts.js';

/**
 * What preFilter works out once per pod, so the filter is a few map lookups per node:
 * - `existingAntiAffinity`: per topology domain, the required anti-affinity terms of pods already placed
 *   that the incoming pod matches (the pod must stay out of those domains);
 * - `affinity`: per domain of each of the pod's required affinity terms, the existing pods matching all of them;
 * - `antiAffinity`: per domain of each of the pod's required anti-affinity terms, the existing pods matching it.
 * Preemption adds and removes pods on a clone of it.
 */
export class AffinityFilterState implements ClonableStateData {
  constructor(
    readonly pod: Pod,
    /** The incoming pod's required terms, namespaceSelectors already turned into namespace names. */
    readonly terms: Pick<PodTerms, 'requiredAffinity' | 'requiredAntiAffinity'>,
    /** The labels of the incoming pod's namespace (existing pods' namespaceSelectors match against them). */
    readonly namespaceLabels: Labels | undefined,
    readonly existingAntiAffinity = new TopologyCounts(),
    readonly affinity = new TopologyCounts(),
    readonly antiAffinity = new TopologyCounts(),
  ) {}

  /** Nothing can reject a node: the pod has no required terms and no placed pod's anti-affinity matches it. */
  get idle(): boolean {
    return this.existingAntiAffinity.size === 0 && this.terms.requiredAffinity.length === 0 && this.terms.requiredAntiAffinity.length === 0;
  }

  /** Counts `other`, placed on `node`, in (delta 1) or out (delta -1). */
  update(other: Pod, node: Node, delta: number): void {
    countExistingAntiAffinity(this.existingAntiAffinity, existingPodTerms(other).requiredAntiAffinity, this.pod, this.namespaceLabels, node, delta);
    countAffinity(this.affinity, this.terms.requiredAffinity, other, node, delta);
    countAntiAffinity(this.antiAffinity, this.terms.requiredAntiAffinity, other, node, delta);
  }

  clone(): AffinityFilterState {
    return new AffinityFilterState(
      this.pod,
      this.terms,
      this.namespaceLabels,
      this.existingAntiAffinity.clone(),
      this.affinity.clone(),
      this.antiAffinity.clone(),
    );
  }
}

/** An existing pod's anti-affinity terms that select the incoming pod, counted in its node's domains. */
function countExistingAntiAffinity(
  counts: TopologyCounts,
  terms: readonly AffinityTerm[],
  incoming: Pod,
  namespaceLabels: Labels | undefined,
  node: Node,
  delta: number,
): void {
  for (const term of terms) if (termMatches(term, incoming, namespaceLabels)) counts.add(node, term.topologyKey, delta);
}

/** A pod counts toward the incoming pod's affinity only when it matches all of its affinity terms. */
function countAffinity(counts: TopologyCounts, terms: readonly AffinityTerm[], other: Pod, node: Node, delta: number): void {
  if (!matchesAllTerms(terms, other)) return;
  for (const term of terms) counts.add(node, term.topologyKey, delta);
}

function countAntiAffinity(counts: TopologyCounts, terms: readonly AffinityTerm[], other: Pod, node: Node, delta: number): void {
  for (const term of terms) if (termMatches(term, other, undefined)) counts.add(node, term.topologyKey, delta);
}

/**
 * Fills a fresh state: placed pods' anti-affinity is looked up only on nodes holding such pods; the pod's
 * own required terms, when it has any, are matched against every placed pod. Each node's answers are
 * remembered until it changes (node-memo), so the pods of one workload, scheduled one after the other,
 * walk only the node that took the previous one.
 */
export function computeFilterState(state: AffinityFilterState, snapshot: SchedulerSnapshot): void {
  const { pod, namespaceLabels } = state;
  const identity = podIdentityKey(pod, namespaceLabels);
  for (const info of snapshot.nodesWithRequiredAntiAffinityPods) {
    for (const key of placedAntiAffinityKeys(info, pod, namespaceLabels, identity)) state.existingAntiAffinity.add(info.node, key, 1);
  }
  const { requiredAffinity, requiredAntiAffinity } = state.terms;
  if (requiredAffinity.length === 0 && requiredAntiAffinity.length === 0) return;
  const allKey = allSelectedKey(requiredAffinity);
  const antiKeys = requiredAntiAffinity.map((term) => termSelectionKey(term));
  for (const info of snapshot.nodes) {
    const node = info.node;
    if (!node.metadata.labels || info.pods.length === 0) continue;
    if (requiredAffinity.length > 0) {
      const count = podsSelectedByAll(info, requiredAffinity, allKey);
      if (count > 0) for (const term of requiredAffinity) state.affinity.add(node, term.topologyKey, count);
    }
    for (let i = 0; i < requiredAntiAffinity.length; i++) {
      const term = requiredAntiAffinity[i]!;
      const count = podsSelectedBy(info, term, antiKeys[i]);
      if (count > 0) state.antiAffinity.add(node, term.topologyKey, count);
    }
  }
}

export function satisfiesPodAffinity(state: AffinityFilterState, info: NodeInfo): boolean {
  const terms = state.terms.requiredAffinity;
  if (terms.length === 0) return true;
  const labels = info.node.metadata.labels;
  let everyDomainHasMatches = true;
  for (const term of terms) {
    const value = labels?.[term.topologyKey];
    // The node must have every topology key the terms name.
    if (value === undefined) return false;
    if (state.affinity.get(term.topologyKey, value) <= 0) everyDomainHasMatches = false;
  }
  if (everyDomainHasMatches) return true;
  // The first of a group of pods with affinity to each other: no pod anywhere matches, but the pod
  // matches its own terms, so it may start the group (else none of them would ever be scheduled).
  return state.affinity.size === 0 && matchesAllTerms(terms, state.pod);
}

export function satisfiesPodAntiAffinity(state: AffinityFilterState, info: NodeInfo): boolean {
  if (state.antiAffinity.size === 0) return true;
  const labels = info.node.metadata.labels;
  if (!labels) return true;
  for (const term of state.terms.requiredAntiAffinity) {
    const value = labels[term.topologyKey];
    if (value !== undefined && state.antiAffinity.get(term.topologyKey, value) > 0) return false;
  }
  return true;
}

export function satisfiesExistingPodsAntiAffinity(state: AffinityFilterState, info: NodeInfo): boolean {
  return state.existingAntiAffinity.size === 0 || !state.existingAntiAffinity.anyPositiveFor(info.node);
}
