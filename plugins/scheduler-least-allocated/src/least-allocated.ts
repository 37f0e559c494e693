import type { Pod } from '@skiff/api';
import type { CycleState, NodeInfo, ResourceAmounts, SchedulerPlugin } from '@skiff/kernel';
import { addAmounts, emptyAmounts, podRequests } from '@skiff/scheduler';
import { NODE_RESOURCES_LEAST_ALLOCATED } from './names.js';
import { DEFAULT_RESOURCES, type LeastAllocatedOptions, type ResourceWeight } from './options.js';

export { DEFAULT_RESOURCES, type LeastAllocatedOptions, type ResourceWeight } from './options.js';

const REQUESTS = `${NODE_RESOURCES_LEAST_ALLOCATED}/requests`;
const MAX_NODE_SCORE = 100;

type Amount = (amounts: ResourceAmounts) => number;

/** Resolved once per plugin, so scoring a node does not compare resource names. */
function amountReader(resource: string): Amount {
  if (resource === 'cpu') return (amounts) => amounts.milliCPU;
  if (resource === 'memory') return (amounts) => amounts.memory;
  return (amounts) => amounts.scalar?.[resource] ?? 0;
}

/** What the node's pods ask for, with request-less containers counted at the non-zero defaults. */
function nodeNonZeroRequested(node: NodeInfo): ResourceAmounts {
  if (node.nonZeroRequested) return node.nonZeroRequested;
  const total = emptyAmounts();
  for (const pod of node.pods) addAmounts(total, podRequests(pod, { nonZeroDefaults: true }));
  return total;
}

/**
 * Kubernetes' LeastAllocated score: per resource, (allocatable − requested) × 100 / allocatable, with
 * the pod itself counted and integer arithmetic as Kubernetes does; then the weighted mean over the
 * resources the node has (a resource with no allocatable amount is left out). Overcommitted → 0.
 */
export function leastAllocatedScore(request: ResourceAmounts, node: NodeInfo, resources: readonly ResourceWeight[]): number {
  return scoreWith(
    request,
    node,
    resources.map(({ name, weight }) => ({ amount: amountReader(name), weight })),
  );
}

function scoreWith(request: ResourceAmounts, node: NodeInfo, readers: readonly { amount: Amount; weight: number }[]): number {
  const used = nodeNonZeroRequested(node);
  let total = 0;
  let weights = 0;
  for (const { amount, weight } of readers) {
    const allocatable = amount(node.allocatable);
    if (allocatable <= 0) continue;
    const requested = amount(used) + amount(request);
    const score = requested > allocatable ? 0 : Math.floor(((allocatable - requested) * MAX_NODE_SCORE) / allocatable);
    total += score * weight;
    weights += weight;
  }
  return weights === 0 ? 0 : Math.floor(total / weights);
}

/** The score plugin: spreads pods by preferring the node with the most room left. */
export function createLeastAllocated(options: LeastAllocatedOptions = { resources: [...DEFAULT_RESOURCES], weight: 1 }): SchedulerPlugin {
  const readers = options.resources.map(({ name, weight }) => ({ amount: amountReader(name), weight }));
  const requestsOf = (state: CycleState, pod: Pod) => (state.get(REQUESTS) as ResourceAmounts | undefined) ?? podRequests(pod, { nonZeroDefaults: true });
  return {
    name: NODE_RESOURCES_LEAST_ALLOCATED,
    defaultWeight: options.weight,
    preScore(state, pod) {
      state.set(REQUESTS, podRequests(pod, { nonZeroDefaults: true }));
      return null;
    },
    score(state, pod, node) {
      return scoreWith(requestsOf(state, pod), node, readers);
    },
  };
}
