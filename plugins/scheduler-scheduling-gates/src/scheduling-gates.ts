import type { Pod } from '@skiff/api';
import type { ClusterEvent, SchedulerPlugin, SchedulingStatus } from '@skiff/kernel';
import { unresolvable } from '@skiff/scheduler';
import { SCHEDULING_GATES } from './names.js';

/** Only the removal of the pod's last gate lets it in (upstream's EventsToRegister, narrowed as later releases do). */
const EVENTS: readonly ClusterEvent[] = Object.freeze([{ resource: 'Pod', actions: ['UpdatePodSchedulingGatesEliminated'] }]);

/** Upstream's reason, the gate names as Go prints a string slice: "waiting for scheduling gates: [a b]". */
export function gatesReason(pod: Pod): string | undefined {
  const gates = pod.spec.schedulingGates ?? [];
  if (gates.length === 0) return undefined;
  return `waiting for scheduling gates: [${gates.map((gate) => gate.name).join(' ')}]`;
}

/**
 * SchedulingGates: a pod with `spec.schedulingGates` is not tried at all — it waits, SchedulingGated,
 * until whoever added the gates removes the last one.
 */
export function createSchedulingGates(): SchedulerPlugin {
  return {
    name: SCHEDULING_GATES,
    events: EVENTS,
    preEnqueue(pod): SchedulingStatus {
      const reason = gatesReason(pod);
      return reason ? unresolvable(reason) : null;
    },
  };
}
