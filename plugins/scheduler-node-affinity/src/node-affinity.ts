import {
  NODE_NAME_FIELD,
  nodeSelectorMatches,
  podFitsNodeAffinity,
  preferredNodeAffinityScore,
  preferredSchedulingTermsErrors,
  type NodeSelectorTerm,
  type Pod,
} from '@skiff/api';
import type { PreFilterResult, SchedulerPlugin, SchedulingStatus } from '@skiff/kernel';
import { defaultNormalizeScore, unresolvable } from '@skiff/scheduler';
import { NODE_AFFINITY, NODE_AFFINITY_REASON, NODE_AFFINITY_WEIGHT } from './names.js';
import { checkArgs, type NodeAffinityArgs } from './options.js';

const SKIP: SchedulingStatus = { code: 'Skip', reasons: [] };

/** The names a term admits by `metadata.name In [...]` fields (intersected), or undefined when it has none. */
function termNodeNames(term: NodeSelectorTerm): Set<string> | undefined {
  let names: Set<string> | undefined;
  for (const requirement of term.matchFields ?? []) {
    if (requirement.key !== NODE_NAME_FIELD || requirement.operator !== 'In') continue;
    const values = new Set(requirement.values ?? []);
    names = names ? new Set([...names].filter((name) => values.has(name))) : values;
  }
  return names;
}

/**
 * The only nodes a pod's required terms can admit, when every term names its nodes by `metadata.name In`:
 * the union over the terms. Undefined when some term does not (any node may then match it).
 */
export function requiredNodeNames(pod: Pod): Set<string> | undefined {
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const union = new Set<string>();
  for (const term of terms) {
    const names = termNodeNames(term);
    if (!names) return undefined;
    for (const name of names) union.add(name);
  }
  return union;
}

/**
 * Kubernetes' NodeAffinity: the filter keeps a pod to nodes matching its `nodeSelector`, its required node
 * affinity and the profile's `addedAffinity` (unresolvable: removing pods changes no label); preFilter
 * narrows the cycle to the nodes named by `metadata.name` fields; the score sums the weights of the
 * preferred terms (the pod's and the profile's) a node matches, normalized so the best node gets 100.
 */
export function createNodeAffinity(args: NodeAffinityArgs = { addedAffinity: {} }): SchedulerPlugin {
  const addedRequired = args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  const addedPreferred = args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution;
  return {
    name: NODE_AFFINITY,
    defaultWeight: NODE_AFFINITY_WEIGHT,
    // A new node, or a node whose labels change, may match.
    events: [{ resource: 'Node', actions: ['Add', 'Update'] }],
    withArgs(given) {
      return createNodeAffinity(checkArgs(given));
    },
    preFilter(_state, pod): SchedulingStatus | PreFilterResult {
      const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
      if (!required && !addedRequired && !pod.spec.nodeSelector) return SKIP;
      const nodeNames = requiredNodeNames(pod);
      if (!nodeNames) return null;
      return nodeNames.size === 0 ? unresolvable(NODE_AFFINITY_REASON.CONFLICT) : { nodeNames };
    },
    filter(_state, pod, info) {
      if (addedRequired && !nodeSelectorMatches(addedRequired, info.node)) return unresolvable(NODE_AFFINITY_REASON.ENFORCED);
      return podFitsNodeAffinity(pod.spec, info.node) ? null : unresolvable(NODE_AFFINITY_REASON.POD);
    },
    preScore(_state, pod) {
      const preferred = pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
      // Nothing preferred, by the pod or the profile: upstream's Skip.
      if (preferred.length === 0 && !addedPreferred?.length) return { code: 'Skip', reasons: [] };
      // Kubernetes cannot score a pod whose preferred terms it cannot parse (the API server refuses such pods).
      const problems = preferredSchedulingTermsErrors(preferred);
      return problems.length > 0 ? { code: 'Error', reasons: problems } : null;
    },
    score(_state, pod, info) {
      const preferred = pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
      return preferredNodeAffinityScore(addedPreferred, info.node) + preferredNodeAffinityScore(preferred, info.node);
    },
    normalizeScore(_state, _pod, scores) {
      defaultNormalizeScore(scores);
    },
  };
}
