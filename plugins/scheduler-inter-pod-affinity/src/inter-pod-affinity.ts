import { RESOURCES, type Namespace, type Pod } from '@skiff/api';
import { checkOptions, type ClusterEvent, type CycleState, type Informer, type SchedulerPlugin, type SchedulingStatus } from '@skiff/kernel';
import { unresolvable, unschedulable } from '@skiff/scheduler';
import { AffinityFilterState, computeFilterState, satisfiesExistingPodsAntiAffinity, satisfiesPodAffinity, satisfiesPodAntiAffinity } from './filtering.js';
import { DEFAULT_WEIGHT, INTER_POD_AFFINITY, REASON_AFFINITY, REASON_ANTI_AFFINITY, REASON_EXISTING_ANTI_AFFINITY } from './names.js';
import { optionsSchema, type InterPodAffinityArgs } from './options.js';
import { normalizeMinMax, topologyScores } from './scoring.js';
import { compilePodTerms, podNamespace, resolveNamespaces, type NamespaceSource, type PodTerms } from './terms.js';
import type { TopologyCounts } from './topology-counts.js';

const FILTER_STATE = `PreFilter${INTER_POD_AFFINITY}`;
const SCORE_STATE = `PreScore${INTER_POD_AFFINITY}`;

// One status object per reason: the filter runs once per node and must not allocate to reject.
const AFFINITY_MISMATCH = Object.freeze(unresolvable(REASON_AFFINITY));
const ANTI_AFFINITY_MISMATCH = Object.freeze(unschedulable(REASON_ANTI_AFFINITY));
const EXISTING_ANTI_AFFINITY_MISMATCH = Object.freeze(unschedulable(REASON_EXISTING_ANTI_AFFINITY));
const NO_PRE_FILTER_STATE: NonNullable<SchedulingStatus> = Object.freeze({
  code: 'Error',
  reasons: [`no "${FILTER_STATE}" in the cycle state: ${INTER_POD_AFFINITY}'s preFilter did not run for this pod`],
});

/**
 * Upstream's EventsToRegister: any change to an assigned pod (a new pod to be near, a pod whose
 * anti-affinity stood in the way leaving, labels changing) and a new node or a node's labels changing
 * (a new topology domain).
 */
export const INTER_POD_AFFINITY_EVENTS: readonly ClusterEvent[] = Object.freeze([
  { resource: 'Pod', actions: ['*'] },
  { resource: 'Node', actions: ['Add', 'UpdateNodeLabel'] },
]);

const DEFAULT_ARGS: InterPodAffinityArgs = { hardPodAffinityWeight: 1, ignorePreferredTermsOfExistingPods: false };

function namespacesFrom(informer: Informer<Namespace>): NamespaceSource {
  return {
    labelsOf: (name) => informer.get(name)?.metadata.labels,
    matching: (selector) => informer.list().flatMap((namespace) => (selector.matches(namespace.metadata.labels) ? [namespace.metadata.name!] : [])),
  };
}

function parsingFailure(err: unknown): NonNullable<SchedulingStatus> {
  return unresolvable(`parsing pod: ${err instanceof Error ? err.message : String(err)}`);
}

function filterStateOf(state: CycleState): AffinityFilterState | undefined {
  return state.get(FILTER_STATE) as AffinityFilterState | undefined;
}

/**
 * Kubernetes' InterPodAffinity: required pod affinity and anti-affinity (the pod's own, and placed pods'
 * anti-affinity against it) as a filter; preferred terms — and placed pods' terms that select the pod —
 * as a score. Namespace labels (for namespaceSelector) come from the namespace informer taken in `init`.
 */
export function createInterPodAffinity(args: InterPodAffinityArgs = DEFAULT_ARGS): SchedulerPlugin {
  let namespaces: NamespaceSource | undefined;
  const namespaceLabelsOf = (pod: Pod) => namespaces?.labelsOf(podNamespace(pod));

  return {
    name: INTER_POD_AFFINITY,
    defaultWeight: DEFAULT_WEIGHT,
    events: INTER_POD_AFFINITY_EVENTS,

    withArgs(given) {
      // A profile's args go over the package options; with none, the profile gets a copy with the same options.
      return createInterPodAffinity(checkOptions(optionsSchema, { ...{}, ...args, ...given }, 'args') as InterPodAffinityArgs);
    },

    init(handle) {
      namespaces = namespacesFrom(handle.informers.informer<Namespace>(RESOURCES.namespaces));
    },

    preFilter(state, pod, snapshot) {
      let own: PodTerms;
      try {
        own = compilePodTerms(pod);
      } catch (err) {
        return parsingFailure(err);
      }
      const terms = {
        requiredAffinity: own.requiredAffinity.map((term) => resolveNamespaces(term, namespaces)),
        requiredAntiAffinity: own.requiredAntiAffinity.map((term) => resolveNamespaces(term, namespaces)),
      };
      const filterState = new AffinityFilterState(pod, terms, namespaceLabelsOf(pod));
      computeFilterState(filterState, snapshot);
      state.set(FILTER_STATE, filterState);
      return null;
    },

    addPod(state, _podToSchedule, podToAdd, node) {
      const filterState = filterStateOf(state);
      if (!filterState) return NO_PRE_FILTER_STATE;
      filterState.update(podToAdd, node.node, 1);
      return null;
    },

    removePod(state, _podToSchedule, podToRemove, node) {
      const filterState = filterStateOf(state);
      if (!filterState) return NO_PRE_FILTER_STATE;
      filterState.update(podToRemove, node.node, -1);
      return null;
    },

    filter(state, _pod, node) {
      const filterState = filterStateOf(state);
      if (!filterState) return NO_PRE_FILTER_STATE;
      if (filterState.idle) return null;
      if (!satisfiesPodAffinity(filterState, node)) return AFFINITY_MISMATCH;
      if (!satisfiesPodAntiAffinity(filterState, node)) return ANTI_AFFINITY_MISMATCH;
      if (!satisfiesExistingPodsAntiAffinity(filterState, node)) return EXISTING_ANTI_AFFINITY_MISMATCH;
      return null;
    },

    preScore(state, pod, _nodes, snapshot) {
      state.delete(SCORE_STATE);
      let own: PodTerms;
      try {
        own = compilePodTerms(pod);
      } catch (err) {
        return parsingFailure(err);
      }
      const hasPreferredTerms = own.preferredAffinity.length > 0 || own.preferredAntiAffinity.length > 0;
      if (!hasPreferredTerms && (args.ignorePreferredTermsOfExistingPods || snapshot.nodesWithAffinityPods.length === 0)) return { code: 'Skip', reasons: [] };
      const terms = {
        preferredAffinity: own.preferredAffinity.map((term) => resolveNamespaces(term, namespaces)),
        preferredAntiAffinity: own.preferredAntiAffinity.map((term) => resolveNamespaces(term, namespaces)),
      };
      const input = { pod, terms, namespaceLabels: namespaceLabelsOf(pod), hardPodAffinityWeight: args.hardPodAffinityWeight };
      state.set(SCORE_STATE, topologyScores(input, snapshot));
      return null;
    },

    score(state, _pod, node) {
      const scores = state.get(SCORE_STATE) as TopologyCounts | undefined;
      return scores ? scores.sumFor(node.node) : 0;
    },

    normalizeScore(state, _pod, scores) {
      const topology = state.get(SCORE_STATE) as TopologyCounts | undefined;
      if (topology && topology.size > 0) normalizeMinMax(scores);
    },
  };
}
