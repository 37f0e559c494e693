import type { Container, ContainerStatus, Pod, PodCondition, PodStatus } from '@skiff/api';
import type { ContainerObservation, PodObservation } from './pod-runtime.js';
import { qosClass } from './qos.js';

export interface StatusContext {
  /** The node's address (status.hostIP). */
  hostIP: string;
  /** The containerID scheme: "<runtime>://<id>". */
  runtimeName: string;
  /** RFC 3339, seconds precision. */
  now: string;
}

/** A Kubernetes timestamp (seconds precision, as metav1.Time) from milliseconds since the epoch. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

function containerStatus(spec: Container, observed: ContainerObservation, context: StatusContext, init: boolean): ContainerStatus {
  const instance = observed.status;
  const status: ContainerStatus = {
    name: spec.name,
    image: spec.image ?? '',
    imageID: instance?.imageRef ?? '',
    ...(instance ? { containerID: `${context.runtimeName}://${instance.id}` } : {}),
    ready: false,
    started: false,
    restartCount: observed.restartCount,
    state: {},
  };
  if (instance?.state === 'CONTAINER_RUNNING') {
    status.state = { running: { startedAt: rfc3339(instance.startedAt ?? instance.createdAt) } };
    status.started = true;
    // A running init container is still working (a running sidecar is serving).
    status.ready = !init || spec.restartPolicy === 'Always';
  } else if (instance?.state === 'CONTAINER_EXITED' && !observed.waiting) {
    const exitCode = instance.exitCode ?? 0;
    status.state = {
      terminated: {
        exitCode,
        reason: instance.reason ?? (exitCode === 0 ? 'Completed' : 'Error'),
        ...(instance.message ? { message: instance.message } : {}),
        startedAt: rfc3339(instance.startedAt ?? instance.createdAt),
        finishedAt: rfc3339(instance.finishedAt ?? instance.createdAt),
        containerID: status.containerID!,
      },
    };
    status.ready = init && exitCode === 0;
  } else {
    const waiting = observed.waiting ?? { reason: 'ContainerCreating' };
    status.state = { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } };
  }
  return status;
}

function phaseOf(pod: Pod, observed: PodObservation, init: ContainerStatus[], regular: ContainerStatus[]): NonNullable<PodStatus['phase']> {
  const restartPolicy = pod.spec.restartPolicy ?? 'Always';
  if (!observed.initialized) {
    const initFailed = init.some((s) => (s.state.terminated?.exitCode ?? 0) !== 0);
    return restartPolicy === 'Never' && initFailed ? 'Failed' : 'Pending';
  }
  if (regular.some((s) => s.state.waiting)) return 'Pending';
  if (regular.some((s) => s.state.running)) return 'Running';
  // Every container has exited.
  if (restartPolicy === 'Always') return 'Running';
  const failed = regular.some((s) => s.state.terminated!.exitCode !== 0);
  if (!failed) return 'Succeeded';
  return restartPolicy === 'Never' ? 'Failed' : 'Running';
}

function condition(type: string, ok: boolean, reason?: string, message?: string): PodCondition {
  return { type, status: ok ? 'True' : 'False', ...(ok || !reason ? {} : { reason }), ...(ok || !message ? {} : { message }) };
}

/** Keeps each condition's lastTransitionTime unless its status changed. */
function withTransitions(conditions: PodCondition[], previous: PodCondition[] | undefined, now: string): PodCondition[] {
  return conditions.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const lastTransitionTime = before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now;
    return {
      type: c.type,
      status: c.status,
      lastProbeTime: null,
      lastTransitionTime,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
    };
  });
}

/** The pod status a sync observed, in the shape and words `kubectl get/describe/wait` expect. */
export function buildPodStatus(pod: Pod, observed: PodObservation, context: StatusContext): PodStatus {
  const initSpecs = pod.spec.initContainers ?? [];
  const init = initSpecs.map((spec, i) => containerStatus(spec, observed.initContainers[i]!, context, true));
  const regular = pod.spec.containers.map((spec, i) => containerStatus(spec, observed.containers[i]!, context, false));
  const phase = phaseOf(pod, observed, init, regular);
  const completed = phase === 'Succeeded' || phase === 'Failed';
  const unready = regular.filter((s) => !s.ready).map((s) => s.name);
  const incompleteInit = init
    .filter((s) => !s.ready && !(initSpecs.find((c) => c.name === s.name)?.restartPolicy === 'Always' && s.started))
    .map((s) => s.name);
  const readyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = completed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const conditions = withTransitions(
    [
      condition('PodReadyToStartContainers', observed.sandboxReady && observed.podIP !== undefined),
      condition('Initialized', observed.initialized, 'ContainersNotInitialized', `containers with incomplete status: [${incompleteInit.join(' ')}]`),
      condition('Ready', unready.length === 0 && !completed, readyReason, readyMessage),
      condition('ContainersReady', unready.length === 0 && !completed, readyReason, readyMessage),
      condition('PodScheduled', true),
    ],
    pod.status?.conditions,
    context.now,
  );
  return {
    phase,
    conditions,
    hostIP: context.hostIP,
    hostIPs: [{ ip: context.hostIP }],
    ...(observed.podIP ? { podIP: observed.podIP, podIPs: [{ ip: observed.podIP }] } : {}),
    startTime: pod.status?.startTime ?? context.now,
    ...(init.length ? { initContainerStatuses: init } : {}),
    containerStatuses: regular,
    qosClass: qosClass(pod),
  };
}

/** The status of a pod node-level admission turned away: Failed, with the admitter's reason and message. */
export function rejectedPodStatus(pod: Pod, rejection: { reason: string; message: string }, context: StatusContext): PodStatus {
  return {
    ...pod.status,
    phase: 'Failed',
    reason: rejection.reason,
    message: rejection.message,
    startTime: pod.status?.startTime ?? context.now,
    qosClass: qosClass(pod),
  };
}

/** Deep equality of JSON values, ignoring key order and treating null like absent. */
export function sameStatus(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameStatus(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) if (!sameStatus(left[key], right[key])) return false;
  return true;
}
