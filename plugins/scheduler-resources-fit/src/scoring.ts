import type { NodeInfo, ResourceAmounts } from '@skiff/kernel';
import { MAX_NODE_SCORE } from '@skiff/scheduler';
import { isScalarResourceName } from './resource-names.js';
import { LEAST_ALLOCATED, MAX_CUSTOM_PRIORITY_SCORE, MOST_ALLOCATED } from './names.js';
import type { ResourceSpec, ScoringStrategyType, ShapePoint } from './options.js';

/** Scores a node from what each resource would have requested (the pod included) and its allocatable amount. */
export type ResourceScorer = (requested: ArrayLike<number>, allocatable: ArrayLike<number>) => number;

/** (allocatable − requested) × 100 / allocatable; an overcommitted resource scores 0. */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** requested × 100 / allocatable, capped at 100 (request-less pods count as 100m / 200Mi and may overshoot). */
export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.trunc((Math.min(requested, capacity) * MAX_NODE_SCORE) / capacity);
}

/** The weighted mean of per-resource scores over the resources the node has, in integers as upstream. */
function weightedMean(resources: readonly ResourceSpec[], perResource: (requested: number, capacity: number) => number): ResourceScorer {
  return (requested, allocatable) => {
    let total = 0;
    let weights = 0;
    for (let i = 0; i < resources.length; i++) {
      if (allocatable[i] === 0) continue;
      const weight = resources[i]!.weight;
      total += perResource(requested[i]!, allocatable[i]!) * weight;
      weights += weight;
    }
    return weights === 0 ? 0 : Math.trunc(total / weights);
  };
}

/**
 * A piecewise linear function through the shape's points (utilization → score): flat before the first
 * point and after the last, integer interpolation in between.
 */
export function brokenLinearFunction(shape: readonly ShapePoint[]): (utilization: number) => number {
  return (p) => {
    for (let i = 0; i < shape.length; i++) {
      const point = shape[i]!;
      if (p > point.utilization) continue;
      if (i === 0) return point.score;
      const prev = shape[i - 1]!;
      return prev.score + Math.trunc(((point.score - prev.score) * (p - prev.utilization)) / (point.utilization - prev.utilization));
    }
    return shape[shape.length - 1]!.score;
  };
}

/**
 * RequestedToCapacityRatio: each resource's utilization (0..100, overcommitted or absent = 100) through
 * the shape (scores 0..10 scaled to 0..100); resources scoring 0 drop out; the weighted mean is rounded.
 */
export function requestedToCapacityRatioScorer(resources: readonly ResourceSpec[], shape: readonly ShapePoint[]): ResourceScorer {
  const scale = MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE;
  const raw = brokenLinearFunction(shape.map(({ utilization, score }) => ({ utilization, score: score * scale })));
  const perResource = (requested: number, capacity: number) =>
    capacity === 0 || requested > capacity ? raw(100) : raw(Math.trunc((requested * 100) / capacity));
  return (requested, allocatable) => {
    let total = 0;
    let weights = 0;
    for (let i = 0; i < resources.length; i++) {
      if (allocatable[i] === 0) continue;
      const score = perResource(requested[i]!, allocatable[i]!);
      if (score <= 0) continue;
      total += score * resources[i]!.weight;
      weights += resources[i]!.weight;
    }
    return weights === 0 ? 0 : Math.round(total / weights);
  };
}

export function strategyScorer(type: ScoringStrategyType, resources: readonly ResourceSpec[], shape: readonly ShapePoint[]): ResourceScorer {
  if (type === LEAST_ALLOCATED) return weightedMean(resources, leastRequestedScore);
  if (type === MOST_ALLOCATED) return weightedMean(resources, mostRequestedScore);
  return requestedToCapacityRatioScorer(resources, shape);
}

type Reader = (amounts: ResourceAmounts) => number;

/** Where one scored resource's numbers come from, resolved once per plugin so scoring compares no names. */
interface ResourceSource {
  allocatable: Reader;
  /** What the node's pods request: non-zero requests for cpu and memory (see NodeInfo.nonZeroRequested). */
  requested: (node: NodeInfo) => number;
  /** A scalar resource the pod does not request is left out of the score. */
  scalar: boolean;
}

const scalarOf =
  (name: string): Reader =>
  (amounts) =>
    amounts.scalar?.[name] ?? 0;

function sourceOf(name: string): ResourceSource {
  switch (name) {
    case 'cpu':
      return { allocatable: (a) => a.milliCPU, requested: (node) => (node.nonZeroRequested ?? node.requested).milliCPU, scalar: false };
    case 'memory':
      return { allocatable: (a) => a.memory, requested: (node) => (node.nonZeroRequested ?? node.requested).memory, scalar: false };
    case 'ephemeral-storage':
      return { allocatable: scalarOf(name), requested: (node) => scalarOf(name)(node.requested), scalar: false };
    default:
      if (isScalarResourceName(name)) return { allocatable: scalarOf(name), requested: (node) => scalarOf(name)(node.requested), scalar: true };
      // Not a resource a node's allocatable can carry (pods, say): never scored.
      return { allocatable: () => 0, requested: () => 0, scalar: true };
  }
}

/** The pod's requests in the order of `resources` (cpu and memory with the non-zero defaults). */
export function podRequestList(request: ResourceAmounts, resources: readonly ResourceSpec[]): number[] {
  return resources.map(({ name }) => {
    if (name === 'cpu') return request.milliCPU;
    if (name === 'memory') return request.memory;
    return request.scalar?.[name] ?? 0;
  });
}

/** Scores nodes for one pod's request list with a strategy (upstream's resourceAllocationScorer). */
export function resourceAllocationScorer(
  resources: readonly ResourceSpec[],
  scorer: ResourceScorer,
): (node: NodeInfo, podRequests: readonly number[]) => number {
  const sources = resources.map(({ name }) => sourceOf(name));
  // Reused across calls: a score runs synchronously, once per node per pod.
  const requested = new Float64Array(resources.length);
  const allocatable = new Float64Array(resources.length);
  return (node, podRequests) => {
    for (let i = 0; i < sources.length; i++) {
      const source = sources[i]!;
      const podRequest = podRequests[i]!;
      const alloc = source.scalar && podRequest === 0 ? 0 : source.allocatable(node.allocatable);
      allocatable[i] = alloc;
      requested[i] = alloc === 0 ? 0 : source.requested(node) + podRequest;
    }
    return scorer(requested, allocatable);
  };
}
