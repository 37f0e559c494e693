import type { Pod } from '@skiff/api';
import type { ClusterEvent, CycleState, NodeInfo, ResourceAmounts, SchedulerPlugin } from '@skiff/kernel';
import { podRequests } from '@skiff/scheduler';
import { NODE_RESOURCES_FIT } from './names.js';
import { checkArgs, type ResourcesFitOptions } from './options.js';
import { isExtendedResourceName } from './resource-names.js';
import { podRequestList, resourceAllocationScorer, strategyScorer } from './scoring.js';

const PRE_FILTER_KEY = `PreFilter${NODE_RESOURCES_FIT}`;
const PRE_SCORE_KEY = `PreScore${NODE_RESOURCES_FIT}`;
const EPHEMERAL_STORAGE = 'ephemeral-storage';

/** A pod's deletion or a node's addition or change may make room (upstream's EventsToRegister). */
const EVENTS: readonly ClusterEvent[] = Object.freeze([
  { resource: 'Pod', actions: ['Delete'] },
  { resource: 'Node', actions: ['Add', 'Update'] },
]);

/** Which extended resources the filter skips: named ones, and whole groups (the part before the `/`). */
export interface IgnoredResources {
  names: ReadonlySet<string>;
  groups: ReadonlySet<string>;
}

const NONE: IgnoredResources = { names: new Set(), groups: new Set() };

function ignoredBy(ignored: IgnoredResources, name: string): boolean {
  if (!isExtendedResourceName(name)) return false;
  return ignored.names.has(name) || (ignored.groups.size > 0 && ignored.groups.has(name.slice(0, name.indexOf('/'))));
}

/**
 * Why `request` does not fit on the node, in Kubernetes' words: "Too many pods", "Insufficient cpu",
 * "Insufficient memory", "Insufficient ephemeral-storage", "Insufficient <resource>". Empty when it fits.
 * Resources the pod does not ask for are not checked, so an overcommitted node still takes request-less
 * pods (up to its pod limit). `ignored` may be a set of extended resource names, or names and groups.
 */
export function insufficientResources(request: ResourceAmounts, node: NodeInfo, ignored: ReadonlySet<string> | IgnoredResources = NONE): string[] {
  const skip: IgnoredResources = ignored instanceof Set ? { names: ignored, groups: new Set() } : (ignored as IgnoredResources);
  const { allocatable, requested } = node;
  const reasons: string[] = [];
  if (node.pods.length + 1 > allocatable.pods) reasons.push('Too many pods');
  if (request.milliCPU > 0 && request.milliCPU > allocatable.milliCPU - requested.milliCPU) reasons.push('Insufficient cpu');
  if (request.memory > 0 && request.memory > allocatable.memory - requested.memory) reasons.push('Insufficient memory');
  if (!request.scalar) return reasons;
  const free = (name: string) => (allocatable.scalar?.[name] ?? 0) - (requested.scalar?.[name] ?? 0);
  const storage = request.scalar[EPHEMERAL_STORAGE] ?? 0;
  if (storage > 0 && storage > free(EPHEMERAL_STORAGE)) reasons.push(`Insufficient ${EPHEMERAL_STORAGE}`);
  for (const [name, amount] of Object.entries(request.scalar)) {
    if (amount <= 0 || name === EPHEMERAL_STORAGE || ignoredBy(skip, name)) continue;
    if (amount > free(name)) reasons.push(`Insufficient ${name}`);
  }
  return reasons;
}

/** The common case without allocating: every requested resource fits (the filter runs once per node per pod). */
function fits(request: ResourceAmounts, node: NodeInfo, ignored: IgnoredResources): boolean {
  const { allocatable, requested } = node;
  if (node.pods.length + 1 > allocatable.pods) return false;
  if (request.milliCPU > 0 && request.milliCPU > allocatable.milliCPU - requested.milliCPU) return false;
  if (request.memory > 0 && request.memory > allocatable.memory - requested.memory) return false;
  if (!request.scalar) return true;
  return insufficientResources(request, node, ignored).length === 0;
}

/**
 * NodeResourcesFit: the filter lets a pod onto a node only if the node has room for its requests
 * (preFilter computes them once per pod); the score ranks the nodes that fit by the scoring strategy
 * (LeastAllocated by default). `withArgs` gives a profile its own NodeResourcesFitArgs.
 */
export function createResourcesFit(options: Partial<ResourcesFitOptions> = {}): SchedulerPlugin {
  const args = checkArgs(options);
  const ignored: IgnoredResources = { names: new Set(args.ignoredResources), groups: new Set(args.ignoredResourceGroups) };
  const { type, resources, requestedToCapacityRatio } = args.scoringStrategy;
  const scoreNode = resourceAllocationScorer(resources, strategyScorer(type, resources, requestedToCapacityRatio.shape));
  const scoreRequests = (pod: Pod) => podRequestList(podRequests(pod, { nonZeroDefaults: true }), resources);
  return {
    name: NODE_RESOURCES_FIT,
    defaultWeight: 1,
    events: EVENTS,
    // A profile's args go over the package options; with none, the profile gets a copy with the same options.
    withArgs: (given) => createResourcesFit({ ...{}, ...options, ...given }),
    preFilter(state, pod) {
      state.set(PRE_FILTER_KEY, podRequests(pod));
      return null;
    },
    filter(state, pod, node) {
      const request = (state.get(PRE_FILTER_KEY) as ResourceAmounts | undefined) ?? podRequests(pod);
      if (fits(request, node, ignored)) return null;
      return { code: 'Unschedulable', reasons: insufficientResources(request, node, ignored) };
    },
    preScore(state, pod) {
      state.set(PRE_SCORE_KEY, scoreRequests(pod));
      return null;
    },
    score(state: CycleState, pod, node) {
      return scoreNode(node, (state.get(PRE_SCORE_KEY) as number[] | undefined) ?? scoreRequests(pod));
    },
  };
}
