import type { Pod } from '@skiff/api';
import type { NodeInfo, SchedulerSnapshot } from '@skiff/kernel';
import { MAX_NODE_SCORE } from '@skiff/scheduler';
import { countMatching, hasAllTopologyKeys, NodeInclusion, type SpreadConstraint } from './constraints.js';
import { LABEL_HOSTNAME } from './names.js';

/**
 * What preScore gathers for the ScheduleAnyway constraints: matching pods per domain of the candidate
 * nodes (hostname domains are counted by score itself, one node each), the candidates left out for lacking
 * a topology key, and each constraint's weight, log(domains + 2), so that a key with few domains (zones)
 * is not drowned by one with many (hosts).
 */
export class ScoreState {
  constructor(
    readonly constraints: readonly SpreadConstraint[],
    readonly ignoredNodes: ReadonlySet<string> = new Set(),
    readonly counts: ReadonlyMap<string, Map<string, number>> = new Map(),
    readonly weights: readonly number[] = [],
  ) {}

  /** Scores are not modified by addPod / removePod; the copy may share everything. */
  clone(): ScoreState {
    return this;
  }
}

export function computeScoreState(
  pod: Pod,
  constraints: readonly SpreadConstraint[],
  candidates: readonly NodeInfo[],
  snapshot: SchedulerSnapshot,
  requireAllTopologies: boolean,
): ScoreState {
  if (constraints.length === 0) return new ScoreState(constraints);
  const ignoredNodes = new Set<string>();
  const counts = new Map<string, Map<string, number>>();
  for (const c of constraints) if (c.topologyKey !== LABEL_HOSTNAME) counts.set(c.topologyKey, new Map());
  for (const { node } of candidates) {
    const labels = node.metadata.labels ?? {};
    if (requireAllTopologies && !hasAllTopologyKeys(labels, constraints)) {
      ignoredNodes.add(node.metadata.name!);
      continue;
    }
    for (const c of constraints) {
      if (c.topologyKey === LABEL_HOSTNAME) continue;
      const value = Object.hasOwn(labels, c.topologyKey) ? labels[c.topologyKey]! : '';
      const byValue = counts.get(c.topologyKey)!;
      if (!byValue.has(value)) byValue.set(value, 0);
    }
  }
  const weights = constraints.map((c) => {
    const size = c.topologyKey === LABEL_HOSTNAME ? candidates.length - ignoredNodes.size : counts.get(c.topologyKey)!.size;
    return Math.log(size + 2);
  });

  // Every node of the cluster adds its pods to the candidates' domains (a zone's other nodes count too).
  const inclusion = new NodeInclusion(pod, constraints);
  const namespace = pod.metadata.namespace;
  for (const info of snapshot.nodes) {
    const labels = info.node.metadata.labels ?? {};
    if (requireAllTopologies && !hasAllTopologyKeys(labels, constraints)) continue;
    const included = inclusion.forNode(info.node);
    for (const c of constraints) {
      if (c.topologyKey === LABEL_HOSTNAME || !included(c)) continue;
      const byValue = counts.get(c.topologyKey)!;
      const value = Object.hasOwn(labels, c.topologyKey) ? labels[c.topologyKey]! : '';
      const current = byValue.get(value);
      if (current === undefined) continue;
      byValue.set(value, current + countMatching(info, c, namespace));
    }
  }
  return new ScoreState(constraints, ignoredNodes, counts, weights);
}

/** The node's raw score: matching pods in each of its domains, weighted, plus maxSkew - 1 per constraint (fewer is better). */
export function rawScore(state: ScoreState, pod: Pod, info: NodeInfo): number {
  const { node } = info;
  if (state.constraints.length === 0 || state.ignoredNodes.has(node.metadata.name!)) return 0;
  const labels = node.metadata.labels ?? {};
  let score = 0;
  state.constraints.forEach((c, i) => {
    if (!Object.hasOwn(labels, c.topologyKey)) return;
    const count =
      c.topologyKey === LABEL_HOSTNAME ? countMatching(info, c, pod.metadata.namespace) : (state.counts.get(c.topologyKey)!.get(labels[c.topologyKey]!) ?? 0);
    score += count * state.weights[i]! + (c.maxSkew - 1);
  });
  return Math.round(score);
}

/**
 * Reverses and scales raw scores to 0..MAX_NODE_SCORE: the node with the fewest matching pods gets the
 * most, `MAX * (max + min - score) / max` (integer division); ignored nodes get 0; all-zero gets MAX.
 */
export function normalizeScores(state: ScoreState, scores: Map<string, number>): void {
  if (state.constraints.length === 0) return;
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const [name, score] of scores) {
    if (state.ignoredNodes.has(name)) continue;
    if (score < min) min = score;
    if (score > max) max = score;
  }
  for (const [name, score] of scores) {
    if (state.ignoredNodes.has(name)) scores.set(name, 0);
    else if (max === 0) scores.set(name, MAX_NODE_SCORE);
    else scores.set(name, Math.trunc((MAX_NODE_SCORE * (max + min - score)) / max));
  }
}
