import type { Node } from '@skiff/api';
import type { SchedulerPlugin } from '@skiff/kernel';
import { BUILTIN_PLUGINS } from '../names.js';
import { podToleratesTaint, type Taint } from './tolerations.js';

const NOT_READY: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
const UNREACHABLE: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' };

/** Per Node object (a new one arrives with every change): the filter runs nodes × pods times. */
const taintOf = new WeakMap<Node, Taint | null>();

function readinessTaint(node: Node): Taint | undefined {
  let taint = taintOf.get(node);
  if (taint === undefined) taintOf.set(node, (taint = conditionTaint(node) ?? null));
  return taint ?? undefined;
}

/** The taint Kubernetes' node lifecycle puts on a node in this state, or none for a Ready node. */
function conditionTaint(node: Node): Taint | undefined {
  for (const condition of node.status?.conditions ?? []) {
    if (condition.type !== 'Ready') continue;
    if (condition.status === 'True') return undefined;
    return condition.status === 'False' ? NOT_READY : UNREACHABLE;
  }
  return UNREACHABLE;
}

/**
 * Keeps pods off nodes whose Ready condition is not True. Kubernetes does this with the not-ready /
 * unreachable NoSchedule taints and the TaintToleration filter; reading the condition directly gives
 * the same answer (and the same message) without depending on a controller having tainted the node.
 * Pods that tolerate those taints (DaemonSet pods do) may still go there.
 */
export const nodeReady: SchedulerPlugin = {
  name: BUILTIN_PLUGINS.NODE_READY,
  filter(_state, pod, info) {
    const taint = readinessTaint(info.node);
    if (!taint || podToleratesTaint(pod, taint)) return null;
    return { code: 'UnschedulableAndUnresolvable', reasons: [`node(s) had untolerated taint {${taint.key}: }`] };
  },
};
