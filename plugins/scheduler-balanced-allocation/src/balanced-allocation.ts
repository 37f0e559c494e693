import type { Pod } from '@skiff/api';
import type { NodeInfo, ResourceAmounts, SchedulerPlugin } from '@skiff/kernel';
import { MAX_NODE_SCORE, podRequests } from '@skiff/scheduler';
import { NODE_RESOURCES_BALANCED_ALLOCATION } from './names.js';
import { checkArgs, type BalancedAllocationOptions } from './options.js';

const PRE_SCORE_KEY = `PreScore${NODE_RESOURCES_BALANCED_ALLOCATION}`;

/** Kept among a node's scalar resources (extended, hugepages, `kubernetes.io/` prefixed, attachable volumes). */
function isScalarResourceName(name: string): boolean {
  const extended = name.includes('/') && !name.includes('kubernetes.io/') && !name.startsWith('requests.');
  return extended || name.startsWith('hugepages-') || name.includes('kubernetes.io/') || name.startsWith('attachable-volumes-');
}

type Reader = (amounts: ResourceAmounts) => number;

/** How to read one resource, resolved once per plugin; `scalar` resources the pod does not request are left out. */
function readerOf(name: string): { read: Reader; scalar: boolean } {
  if (name === 'cpu') return { read: (a) => a.milliCPU, scalar: false };
  if (name === 'memory') return { read: (a) => a.memory, scalar: false };
  const read: Reader = (a) => a.scalar?.[name] ?? 0;
  if (name === 'ephemeral-storage') return { read, scalar: false };
  // Not a resource a node's allocatable can carry (pods, say): never counted.
  return isScalarResourceName(name) ? { read, scalar: true } : { read: () => 0, scalar: true };
}

/**
 * How evenly the node's resources would be used with the pod on it: each resource's requested fraction of
 * allocatable (capped at 1), then `(1 − standard deviation) × 100`, truncated. Two resources: the deviation
 * is half their difference; one: 0.
 */
export function balancedScore(fractions: readonly number[]): number {
  let std = 0;
  if (fractions.length === 2) std = Math.abs(fractions[0]! - fractions[1]!) / 2;
  else if (fractions.length > 2) {
    const mean = fractions.reduce((sum, f) => sum + f, 0) / fractions.length;
    std = Math.sqrt(fractions.reduce((sum, f) => sum + (f - mean) * (f - mean), 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

/**
 * NodeResourcesBalancedAllocation: prefers nodes where the pod leaves cpu and memory (or the configured
 * resources) equally used, so no node runs out of one while the other sits idle. Counts requests as they
 * are (no non-zero defaults). Default weight 1.
 */
export function createBalancedAllocation(options: Partial<BalancedAllocationOptions> = {}): SchedulerPlugin {
  const args = checkArgs(options);
  const readers = args.resources.map(({ name }) => readerOf(name));
  const requestList = (pod: Pod) => {
    const request = podRequests(pod);
    return readers.map(({ read }) => read(request));
  };
  const fractions: number[] = [];
  function score(node: NodeInfo, podRequest: readonly number[]): number {
    fractions.length = 0;
    for (let i = 0; i < readers.length; i++) {
      const { read, scalar } = readers[i]!;
      if (scalar && podRequest[i] === 0) continue;
      const allocatable = read(node.allocatable);
      if (allocatable === 0) continue;
      fractions.push(Math.min((read(node.requested) + podRequest[i]!) / allocatable, 1));
    }
    return balancedScore(fractions);
  }
  return {
    name: NODE_RESOURCES_BALANCED_ALLOCATION,
    defaultWeight: 1,
    // A profile's args go over the package options; with none, the profile gets a copy with the same options.
    withArgs: (given) => createBalancedAllocation({ ...{}, ...options, ...given }),
    preScore(state, pod) {
      state.set(PRE_SCORE_KEY, requestList(pod));
      return null;
    },
    score(state, pod, node) {
      return score(node, (state.get(PRE_SCORE_KEY) as number[] | undefined) ?? requestList(pod));
    },
  };
}
