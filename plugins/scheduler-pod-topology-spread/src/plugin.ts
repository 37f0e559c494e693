import type { Pod, TopologySpreadConstraint } from '@skiff/api';
import type { ClusterEvent, CycleState, SchedulerPlugin, SchedulingStatus } from '@skiff/kernel';
import { unresolvable, unschedulable } from '@skiff/scheduler';
import { compileConstraints, type SpreadConstraint, type WhenUnsatisfiable } from './constraints.js';
import { defaultSelector, selectorSources, type SelectorSources } from './default-selector.js';
import { PodTopologySpreadError } from './errors.js';
import { computeSpreadState, type SpreadState } from './filtering.js';
import {
  DEFAULT_WEIGHT,
  LABEL_HOSTNAME,
  LABEL_TOPOLOGY_ZONE,
  POD_TOPOLOGY_SPREAD,
  REASON_CONSTRAINTS_NOT_MATCH,
  REASON_NODE_LABEL_NOT_MATCH,
} from './names.js';
import { checkArgs, type PodTopologySpreadOptions } from './options.js';
import { computeScoreState, normalizeScores, rawScore, type ScoreState } from './scoring.js';

const PRE_FILTER_KEY = `PreFilter${POD_TOPOLOGY_SPREAD}`;
const PRE_SCORE_KEY = `PreScore${POD_TOPOLOGY_SPREAD}`;

/** Kubernetes' system default constraints (`defaultingType: System`). */
export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = Object.freeze([
  { topologyKey: LABEL_HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: LABEL_TOPOLOGY_ZONE, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
]);

/** An assigned pod's add, update or delete, and a node's add, delete or label change (upstream's EventsToRegister). */
const EVENTS: readonly ClusterEvent[] = Object.freeze([
  { resource: 'Pod', actions: ['*'] },
  { resource: 'Node', actions: ['Add', 'Delete', 'UpdateNodeLabel'] },
]);

function errorStatus(err: unknown): NonNullable<SchedulingStatus> {
  return { code: 'Error', reasons: [err instanceof Error ? err.message : String(err)] };
}

/**
 * The PodTopologySpread plugin: DoNotSchedule constraints filter (preFilter counts matching pods per
 * topology domain once per pod; filter compares the node's domain with the smallest, O(constraints)),
 * ScheduleAnyway constraints score. Pods without constraints get the cluster defaults when a Service or
 * controller selects them (`init` supplies the informers those selectors come from).
 */
export function createPodTopologySpread(args: Partial<PodTopologySpreadOptions> = {}): SchedulerPlugin {
  const systemDefaulted = (args.defaultingType ?? 'System') === 'System';
  const defaults: readonly TopologySpreadConstraint[] = systemDefaulted ? SYSTEM_DEFAULT_CONSTRAINTS : (args.defaultConstraints ?? []);
  let sources: SelectorSources | undefined;

  /** The pod's own constraints for `action`, else the cluster defaults with the pod's Service / controller selector. */
  function constraintsFor(pod: Pod, action: WhenUnsatisfiable): SpreadConstraint[] {
    const podLabels = pod.metadata.labels ?? {};
    const own = pod.spec.topologySpreadConstraints ?? [];
    if (own.length > 0) return compileConstraints(own, podLabels, action);
    const compiled = compileConstraints(defaults, podLabels, action);
    if (compiled.length === 0 || !sources) return [];
    const selector = defaultSelector(pod, sources);
    if (selector.empty) return [];
    return compiled.map((c) => ({ ...{}, ...c, selector }));
  }

  const spreadState = (state: CycleState) => state.get(PRE_FILTER_KEY) as SpreadState | undefined;

  return {
    name: POD_TOPOLOGY_SPREAD,
    defaultWeight: DEFAULT_WEIGHT,
    events: EVENTS,
    // A profile's args go over the package options; with none, the profile gets a copy with the same options.
    withArgs: (given) => createPodTopologySpread(checkArgs({ ...{}, ...args, ...given })),
    init(handle) {
      // Upstream lists these only when some default constraint needs them; the scheduler starts the factory.
      if (defaults.length > 0) sources = selectorSources(handle.informers);
    },
    preFilter(state, pod, snapshot) {
      let constraints: SpreadConstraint[];
      try {
        constraints = constraintsFor(pod, 'DoNotSchedule');
      } catch (err) {
        return errorStatus(new PodTopologySpreadError('SKIFF_ERR_POD_TOPOLOGY_SPREAD_SELECTOR', { which: 'hard', detail: String((err as Error).message) }));
      }
      // No hard constraint: nothing to filter on (upstream's Skip), and nothing to count.
      if (constraints.length === 0) return { code: 'Skip', reasons: [] };
      state.set(PRE_FILTER_KEY, computeSpreadState(pod, constraints, snapshot));
      return null;
    },
    addPod(state, podToSchedule, podToAdd, info) {
      spreadState(state)?.update(podToAdd, podToSchedule, info.node, 1);
      return null;
    },
    removePod(state, podToSchedule, podToRemove, info) {
      spreadState(state)?.update(podToRemove, podToSchedule, info.node, -1);
      return null;
    },
    filter(state, pod, info) {
      const spread = spreadState(state);
      if (!spread) return errorStatus(new PodTopologySpreadError('SKIFF_ERR_POD_TOPOLOGY_SPREAD_NO_STATE', { key: PRE_FILTER_KEY }));
      const labels = info.node.metadata.labels;
      for (const c of spread.constraints) {
        if (!labels || !Object.hasOwn(labels, c.topologyKey)) return unresolvable(REASON_NODE_LABEL_NOT_MATCH);
        const min = spread.minMatching(c);
        if (min === undefined) continue;
        const self = c.selector.matches(pod.metadata.labels) ? 1 : 0;
        if (spread.matching(c.topologyKey, labels[c.topologyKey]!) + self - min > c.maxSkew) return unschedulable(REASON_CONSTRAINTS_NOT_MATCH);
      }
      return null;
    },
    preScore(state, pod, nodes, snapshot) {
      let constraints: SpreadConstraint[];
      try {
        constraints = snapshot.nodes.length === 0 ? [] : constraintsFor(pod, 'ScheduleAnyway');
      } catch (err) {
        return errorStatus(new PodTopologySpreadError('SKIFF_ERR_POD_TOPOLOGY_SPREAD_SELECTOR', { which: 'soft', detail: String((err as Error).message) }));
      }
      if (constraints.length === 0) return { code: 'Skip', reasons: [] };
      // Nodes lacking a key are left out unless the constraints are the system defaults (a zoneless node still spreads by host).
      const requireAllTopologies = (pod.spec.topologySpreadConstraints?.length ?? 0) > 0 || !systemDefaulted;
      state.set(PRE_SCORE_KEY, computeScoreState(pod, constraints, nodes, snapshot, requireAllTopologies));
      return null;
    },
    score(state, pod, info) {
      const scores = state.get(PRE_SCORE_KEY) as ScoreState | undefined;
      return scores ? rawScore(scores, pod, info) : 0;
    },
    normalizeScore(state, _pod, scores) {
      const scoreState = state.get(PRE_SCORE_KEY) as ScoreState | undefined;
      if (scoreState) normalizeScores(scoreState, scores);
    },
  };
}
