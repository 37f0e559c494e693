// The pod row of `kubectl get pods`, computed as kubectl's printer computes it: READY counts ready
// running containers, STATUS is the most telling reason (init progress, a waiting or terminated
// container's reason, Terminating), RESTARTS adds how long ago the last restart was.
import {
  humanAge,
  humanDuration,
  type Container,
  type ContainerStateTerminated,
  type ContainerStatus,
  type Pod,
  type PodSpec,
  type PodStatus,
} from '@skiff/api';
import type { TableColumn } from '@skiff/kernel';

const columnOf = (name: string, priority = 0): TableColumn => ({ name, type: 'string', priority });

// Descriptions stay empty: upstream's printer prose is not copied.
export const POD_COLUMNS: TableColumn[] = [
  { name: 'Name', type: 'string', format: 'name', priority: 0 },
  columnOf('Ready'),
  columnOf('Status'),
  columnOf('Restarts'),
  columnOf('Age'),
  columnOf('IP', 1),
  columnOf('Node', 1),
  columnOf('Nominated Node', 1),
  columnOf('Readiness Gates', 1),
];

/** The pod reason the node lifecycle controller sets when a node stops reporting. */
const NODE_LOST_REASON = 'NodeLost';

/** The parts of a pod its row reads, present even when the stored pod lacks them. */
interface PodView {
  spec: PodSpec;
  status: PodStatus;
}

const isRestartable = (container: Container | undefined) => container?.restartPolicy === 'Always';
const hasTrueCondition = (pod: PodView, type: string) => (pod.status.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** Tracks the restart count and the latest time a container last terminated. */
class Restarts {
  count = 0;
  last = 0;

  add(status: ContainerStatus): void {
    this.count += status.restartCount ?? 0;
    const finished = Date.parse(status.lastState?.terminated?.finishedAt ?? '');
    if (!Number.isNaN(finished) && finished > this.last) this.last = finished;
  }
}

function exitReason(terminated: ContainerStateTerminated, prefix: string): string {
  if (terminated.reason) return `${prefix}${terminated.reason}`;
  return terminated.signal ? `${prefix}Signal:${terminated.signal}` : `${prefix}ExitCode:${terminated.exitCode}`;
}

interface Progress {
  reason: string;
  ready: number;
  restarts: Restarts;
}

/** Init containers: the first one not done decides the status ("Init:1/2", "Init:CrashLoopBackOff"). */
function initProgress(pod: PodView, progress: Progress, sidecarRestarts: Restarts): boolean {
  const byName = new Map((pod.spec.initContainers ?? []).map((c) => [c.name, c]));
  const total = pod.spec.initContainers?.length ?? 0;
  const statuses = pod.status.initContainerStatuses ?? [];
  for (let i = 0; i < statuses.length; i++) {
    const status = statuses[i]!;
    const restartable = isRestartable(byName.get(status.name));
    progress.restarts.add(status);
    if (restartable) sidecarRestarts.add(status);
    const terminated = status.state?.terminated;
    if (terminated && terminated.exitCode === 0) continue;
    if (restartable && status.started) {
      if (status.ready) progress.ready += 1;
      continue;
    }
    if (terminated) progress.reason = exitReason(terminated, 'Init:');
    else if (status.state?.waiting?.reason && status.state.waiting.reason !== 'PodInitializing') progress.reason = `Init:${status.state.waiting.reason}`;
    else progress.reason = `Init:${i}/${total}`;
    return true;
  }
  return false;
}

/** Regular containers, read from the last to the first so that the first container's reason wins. */
function containerProgress(pod: PodView, progress: Progress): void {
  let running = false;
  const statuses = pod.status.containerStatuses ?? [];
  for (let i = statuses.length - 1; i >= 0; i--) {
    const status = statuses[i]!;
    progress.restarts.add(status);
    const terminated = status.state?.terminated;
    if (status.state?.waiting?.reason) progress.reason = status.state.waiting.reason;
    else if (terminated) progress.reason = exitReason(terminated, '');
    else if (status.ready && status.state?.running) {
      running = true;
      progress.ready += 1;
    }
  }
  // A completed container next to a still running one: the pod is not complete yet.
  if (progress.reason === 'Completed' && running) progress.reason = hasTrueCondition(pod, 'Ready') ? 'Running' : 'NotReady';
}

function readinessGates(pod: PodView): string {
  const gates = pod.spec.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  const conditions = pod.status.conditions ?? [];
  const ready = gates.filter((gate) => conditions.find((c) => c.type === gate.conditionType)?.status === 'True').length;
  return `${ready}/${gates.length}`;
}

/** The row of a pod; the pods kind serves it as its table (a table is only ever asked for rows of its own kind). */
export function podCells(object: Pod, now: number): unknown[] {
  const pod: PodView = { spec: object.spec ?? { containers: [] }, status: object.status ?? {} };
  const phase = pod.status.phase ?? '';
  const progress: Progress = { reason: pod.status.reason || phase, ready: 0, restarts: new Restarts() };
  if (pod.status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) progress.reason = 'SchedulingGated';
  const sidecarRestarts = new Restarts();
  const initializing = initProgress(pod, progress, sidecarRestarts);
  if (!initializing || hasTrueCondition(pod, 'Initialized')) {
    // Once initialized, only sidecar init containers still count towards restarts.
    progress.restarts = sidecarRestarts;
    containerProgress(pod, progress);
  }
  const deleting = Boolean(object.metadata.deletionTimestamp);
  if (deleting && pod.status.reason === NODE_LOST_REASON) progress.reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') progress.reason = 'Terminating';

  const { count, last } = progress.restarts;
  const restarts = count !== 0 && last > 0 ? `${count} (${humanDuration(now - last)} ago)` : String(count);
  const total = (pod.spec.containers ?? []).length + (pod.spec.initContainers ?? []).filter(isRestartable).length;
  return [
    object.metadata.name,
    `${progress.ready}/${total}`,
    progress.reason,
    restarts,
    humanAge(object.metadata.creationTimestamp, now),
    pod.status.podIPs?.[0]?.ip || pod.status.podIP || '<none>',
    pod.spec.nodeName || '<none>',
    pod.status.nominatedNodeName || '<none>',
    readinessGates(pod),
  ];
}
