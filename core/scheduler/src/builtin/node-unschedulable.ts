import type { SchedulerPlugin } from '@skiff/kernel';
import { BUILTIN_PLUGINS } from '../names.js';
import { podToleratesTaint, type Taint } from './tolerations.js';

/** Kubernetes' taint for cordoned nodes; pods tolerating it may still go there. */
const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/** Rejects cordoned nodes (spec.unschedulable), as Kubernetes' NodeUnschedulable filter does. */
export const nodeUnschedulable: SchedulerPlugin = {
  name: BUILTIN_PLUGINS.NODE_UNSCHEDULABLE,
  filter(_state, pod, info) {
    if (!info.node.spec?.unschedulable || podToleratesTaint(pod, UNSCHEDULABLE_TAINT)) return null;
    return { code: 'UnschedulableAndUnresolvable', reasons: ['node(s) were unschedulable'] };
  },
};
