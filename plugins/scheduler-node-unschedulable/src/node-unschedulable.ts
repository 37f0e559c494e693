import { toleratesTaint } from '@skiff/api';
import type { SchedulerPlugin } from '@skiff/kernel';
import { unresolvable } from '@skiff/scheduler';
import { NODE_UNSCHEDULABLE, NODE_UNSCHEDULABLE_REASON, UNSCHEDULABLE_TAINT } from './names.js';

/**
 * Kubernetes' NodeUnschedulable filter: a cordoned node (`spec.unschedulable`) takes only pods that
 * tolerate the unschedulable NoSchedule taint, whether or not the node carries that taint yet.
 */
export function createNodeUnschedulable(): SchedulerPlugin {
  return {
    name: NODE_UNSCHEDULABLE,
    // Uncordoning changes spec.unschedulable, which the scheduler's cache classes with taint changes.
    events: [{ resource: 'Node', actions: ['Add', 'UpdateNodeTaint'] }],
    filter(_state, pod, info) {
      if (!info.node.spec?.unschedulable) return null;
      if ((pod.spec.tolerations ?? []).some((toleration) => toleratesTaint(toleration, UNSCHEDULABLE_TAINT))) return null;
      return unresolvable(NODE_UNSCHEDULABLE_REASON);
    },
  };
}
