import type { SchedulerPlugin } from '@skiff/kernel';
import { unresolvable } from '@skiff/scheduler';
import { NODE_NAME, NODE_NAME_MISMATCH } from './names.js';

/**
 * Kubernetes' NodeName filter: a pod whose `spec.nodeName` is set fits only the node of that name. No
 * other pod's removal changes that, so the rejection is unresolvable (preemption skips the node).
 */
export function createNodeName(): SchedulerPlugin {
  return {
    name: NODE_NAME,
    // A node appearing or changing (its name cannot change, but it may be re-created) may be the one asked for.
    events: [{ resource: 'Node', actions: ['Add', 'Update'] }],
    filter(_state, pod, info) {
      const wanted = pod.spec.nodeName;
      if (!wanted || wanted === info.node.metadata.name) return null;
      return unresolvable(NODE_NAME_MISMATCH);
    },
  };
}
