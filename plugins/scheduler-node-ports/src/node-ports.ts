import type { Pod } from '@skiff/api';
import type { CycleState, NodeInfo, SchedulerPlugin } from '@skiff/kernel';
import { unschedulable } from '@skiff/scheduler';
import { podHostPorts, UsedHostPorts, type HostPort } from './host-ports.js';
import { NODE_PORTS, NODE_PORTS_REASON } from './names.js';

const STATE_KEY = `PreFilter${NODE_PORTS}`;

/**
 * Kubernetes' NodePorts filter: every host port the pod asks for must be free on the node. The rejection is
 * resolvable: preempting the pod holding the port frees it.
 */
export function createNodePorts(): SchedulerPlugin {
  // A node's used ports, kept until the cache changes the node (its generation moves).
  const usedByNode = new WeakMap<NodeInfo, { generation: number; used: UsedHostPorts }>();
  const usedOn = (info: NodeInfo): UsedHostPorts => {
    if (info.generation === undefined) return UsedHostPorts.of(info.pods);
    const known = usedByNode.get(info);
    if (known?.generation === info.generation) return known.used;
    const used = UsedHostPorts.of(info.pods);
    usedByNode.set(info, { generation: info.generation, used });
    return used;
  };
  const wantedPorts = (state: CycleState, pod: Pod) => (state.get(STATE_KEY) as HostPort[] | undefined) ?? podHostPorts(pod);

  return {
    name: NODE_PORTS,
    // A pod going away frees its ports; a new or changed node may have them free.
    events: [
      { resource: 'Pod', actions: ['Delete'] },
      { resource: 'Node', actions: ['Add', 'Update'] },
    ],
    preFilter(state, pod) {
      const wanted = podHostPorts(pod);
      // A pod asking for no host port cannot clash: the filter is left out of its cycle.
      if (wanted.length === 0) return { code: 'Skip', reasons: [] };
      state.set(STATE_KEY, wanted);
      return null;
    },
    filter(state, pod, info) {
      const wanted = wantedPorts(state, pod);
      if (wanted.length === 0) return null;
      const used = usedOn(info);
      return wanted.some((port) => used.conflicts(port)) ? unschedulable(NODE_PORTS_REASON) : null;
    },
  };
}
