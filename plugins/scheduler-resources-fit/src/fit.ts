import type { Pod } from '@skiff/api';
import type { CycleState, NodeInfo, ResourceAmounts, SchedulerPlugin } from '@skiff/kernel';
import { podRequests } from '@skiff/scheduler';
import { NODE_RESOURCES_FIT } from './names.js';
import type { ResourcesFitOptions } from './options.js';

const REQUESTS = `${NODE_RESOURCES_FIT}/requests`;

/**
 * Why `request` does not fit on the node, in Kubernetes' words: "Too many pods", "Insufficient cpu",
 * "Insufficient memory", "Insufficient <extended resource>". Empty when it fits. Resources the pod does
 * not ask for are not checked, so an overcommitted node still takes request-less pods (up to its pod limit).
 */
export function insufficientResources(request: ResourceAmounts, node: NodeInfo, ignored: ReadonlySet<string> = new Set()): string[] {
  const { allocatable, requested } = node;
  const reasons: string[] = [];
  if (node.pods.length + 1 > allocatable.pods) reasons.push('Too many pods');
  if (request.milliCPU > 0 && request.milliCPU > allocatable.milliCPU - requested.milliCPU) reasons.push('Insufficient cpu');
  if (request.memory > 0 && request.memory > allocatable.memory - requested.memory) reasons.push('Insufficient memory');
  if (request.scalar) {
    for (const [name, amount] of Object.entries(request.scalar)) {
      if (amount <= 0 || ignored.has(name)) continue;
      const free = (allocatable.scalar?.[name] ?? 0) - (requested.scalar?.[name] ?? 0);
      if (amount > free) reasons.push(`Insufficient ${name}`);
    }
  }
  return reasons;
}

/** The common case without allocating: every requested resource fits (the filter runs once per node per pod). */
function fits(request: ResourceAmounts, node: NodeInfo, ignored: ReadonlySet<string>): boolean {
  const { allocatable, requested } = node;
  if (node.pods.length + 1 > allocatable.pods) return false;
  if (request.milliCPU > 0 && request.milliCPU > allocatable.milliCPU - requested.milliCPU) return false;
  if (request.memory > 0 && request.memory > allocatable.memory - requested.memory) return false;
  if (!request.scalar) return true;
  return insufficientResources(request, node, ignored).length === 0;
}

/** The NodeResourcesFit filter: the node has room for the pod's requests (preFilter computes them once per pod). */
export function createResourcesFit(options: ResourcesFitOptions = { ignoredResources: [] }): SchedulerPlugin {
  const ignored = new Set(options.ignoredResources);
  const requestsOf = (state: CycleState, pod: Pod) => (state.get(REQUESTS) as ResourceAmounts | undefined) ?? podRequests(pod);
  return {
    name: NODE_RESOURCES_FIT,
    preFilter(state, pod) {
      state.set(REQUESTS, podRequests(pod));
      return null;
    },
    filter(state, pod, node) {
      const request = requestsOf(state, pod);
      if (fits(request, node, ignored)) return null;
      return { code: 'Unschedulable', reasons: insufficientResources(request, node, ignored) };
    },
  };
}
