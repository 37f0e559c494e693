import { toleratesTaint, type Pod, type Taint, type Toleration } from '@skiff/api';
import type { CycleState, SchedulerPlugin } from '@skiff/kernel';
import { defaultNormalizeScore, unresolvable } from '@skiff/scheduler';
import { TAINT_TOLERATION, TAINT_TOLERATION_WEIGHT, untoleratedTaintReason } from './names.js';

const PRE_SCORE_KEY = `PreScore${TAINT_TOLERATION}`;

const tolerated = (tolerations: readonly Toleration[], taint: Taint) => tolerations.some((toleration) => toleratesTaint(toleration, taint));

/** The first NoSchedule or NoExecute taint (in the node's order) none of the tolerations tolerate. */
export function firstUntoleratedTaint(taints: readonly Taint[] | undefined, tolerations: readonly Toleration[] | undefined): Taint | undefined {
  for (const taint of taints ?? []) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerated(tolerations ?? [], taint)) return taint;
  }
  return undefined;
}

/** The tolerations that can tolerate a PreferNoSchedule taint: that effect, or none named. */
function preferNoScheduleTolerations(pod: Pod): Toleration[] {
  return (pod.spec.tolerations ?? []).filter((toleration) => !toleration.effect || toleration.effect === 'PreferNoSchedule');
}

/** How many PreferNoSchedule taints the tolerations leave untolerated (the raw score: more is worse). */
export function intolerablePreferNoScheduleTaints(taints: readonly Taint[] | undefined, tolerations: readonly Toleration[]): number {
  let count = 0;
  for (const taint of taints ?? []) if (taint.effect === 'PreferNoSchedule' && !tolerated(tolerations, taint)) count++;
  return count;
}

/**
 * Kubernetes' TaintToleration: the filter rejects a node with a NoSchedule or NoExecute taint the pod does
 * not tolerate (unresolvable: no preemption removes a taint); the score counts the PreferNoSchedule taints
 * it does not tolerate, and normalizing reverses it, so the node with fewest ranks highest.
 */
export function createTaintToleration(): SchedulerPlugin {
  const tolerationsOf = (state: CycleState, pod: Pod) => (state.get(PRE_SCORE_KEY) as Toleration[] | undefined) ?? preferNoScheduleTolerations(pod);
  return {
    name: TAINT_TOLERATION,
    defaultWeight: TAINT_TOLERATION_WEIGHT,
    // A new node, or a node whose taints change, may be tolerated.
    events: [{ resource: 'Node', actions: ['Add', 'Update'] }],
    filter(_state, pod, info) {
      const taint = firstUntoleratedTaint(info.node.spec?.taints, pod.spec.tolerations);
      return taint ? unresolvable(untoleratedTaintReason(taint)) : null;
    },
    preScore(state, pod, nodes) {
      // No feasible node has a PreferNoSchedule taint: every node would score the same (100 after the reversed
      // normalizing), which changes no choice, so the scores need not be asked for.
      if (!nodes.some((info) => info.node.spec?.taints?.some((taint) => taint.effect === 'PreferNoSchedule'))) return { code: 'Skip', reasons: [] };
      state.set(PRE_SCORE_KEY, preferNoScheduleTolerations(pod));
      return null;
    },
    score(state, pod, info) {
      return intolerablePreferNoScheduleTaints(info.node.spec?.taints, tolerationsOf(state, pod));
    },
    normalizeScore(_state, _pod, scores) {
      defaultNormalizeScore(scores, true);
    },
  };
}
