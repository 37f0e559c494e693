import type { Container, ContainerState, ContainerStatus, Pod, PodCondition, PodStatus } from '@skiff/api';
import type { ContainerStatusInfo } from '@skiff/kernel';
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

/** An exited instance as a `terminated` container state. */
function terminatedState(instance: ContainerStatusInfo, context: StatusContext): NonNullable<ContainerState['terminated']> {
  const exitCode = instance.exitCode ?? 0;
  return {
    exitCode,
    reason: instance.reason ?? (exitCode === 0 ? 'Completed' : 'Error'),
    ...(instance.message ? { message: instance.message } : {}),
    startedAt: rfc3339(instance.startedAt ?? instance.createdAt),
    finishedAt: rfc3339(instance.finishedAt ?? instance.createdAt),
    containerID: `${context.runtimeName}://${instance.id}`,
  };
}

function containerStatus(spec: Container, observed: ContainerObservation, context: StatusContext, init: boolean, before?: ContainerStatus): ContainerStatus {
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
    // A startup probe holds `started` (and readiness) back until it succeeds; a readiness probe decides `ready`.
    status.started = observed.started ?? true;
    // A running init container is still working (a running sidecar is serving).
    status.ready = (!init || spec.restartPolicy === 'Always') && status.started && (observed.ready ?? true);
  } else if (instance?.state === 'CONTAINER_EXITED' && !observed.waiting) {
    status.state = { terminated: terminatedState(instance, context) };
    status.ready = init && (instance.exitCode ?? 0) === 0;
  } else {
    const waiting = observed.waiting ?? { reason: 'ContainerCreating' };
    status.state = { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } };
  }
  // The last run that ended: the latest instance while the container waits to restart, else the one before it.
  const ended = instance?.state === 'CONTAINER_EXITED' && status.state.waiting ? instance : observed.previous;
  if (ended?.state === 'CONTAINER_EXITED') status.lastState = { terminated: terminatedState(ended, context) };
  else if (before?.lastState?.terminated && before.restartCount === status.restartCount) status.lastState = before.lastState;
  return status;
}

/**
 * The pod's phase from its containers', as the kubelet works it out: Pending while one waits to start for the
 * first time, Running while one runs (or, with restartPolicy Always or OnFailure, until all have ended well),
 * then Succeeded when all exited 0, else Failed under restartPolicy Never. A container waiting to restart
 * (CrashLoopBackOff) counts as one that ended.
 */
function phaseOf(pod: Pod, observed: PodObservation, init: ContainerStatus[], regular: ContainerStatus[]): NonNullable<PodStatus['phase']> {
  const restartPolicy = pod.spec.restartPolicy ?? 'Always';
  if (!observed.initialized) {
    const initFailed = init.some((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
    return restartPolicy === 'Never' && initFailed ? 'Failed' : 'Pending';
  }
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of regular) {
    if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState?.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (restartPolicy === 'Always') return 'Running';
  if (stopped === succeeded) return 'Succeeded';
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

/** A phase the kubelet decided on whatever the containers say (a pod past its deadline), with its reason and message. */
export interface PodOutcome {
  phase: 'Succeeded' | 'Failed';
  reason?: string;
  message?: string;
}

/**
 * The pod status a sync observed, in the shape and words `kubectl get/describe/wait` expect. A pod the API
 * already has as finished stays so (its phase, reason and message are kept), as does one given an `outcome`.
 */
export function buildPodStatus(pod: Pod, observed: PodObservation, context: StatusContext, outcome?: PodOutcome): PodStatus {
  const initSpecs = pod.spec.initContainers ?? [];
  const earlier = (statuses: ContainerStatus[] | undefined, name: string) => statuses?.find((status) => status.name === name);
  const init = initSpecs.map((spec, i) =>
    containerStatus(spec, observed.initContainers[i]!, context, true, earlier(pod.status?.initContainerStatuses, spec.name)),
  );
  const regular = pod.spec.containers.map((spec, i) =>
    containerStatus(spec, observed.containers[i]!, context, false, earlier(pod.status?.containerStatuses, spec.name)),
  );
  const before = pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed' ? (pod.status as PodOutcome) : undefined;
  const ended = outcome ?? before;
  // Ephemeral containers count for nothing of the pod's (phase, readiness): they are only shown.
  const ephemeral = (pod.spec.ephemeralContainers ?? []).map((spec, i) => {
    const observation = observed.ephemeralContainers[i]!;
    const before = earlier(pod.status?.ephemeralContainerStatuses, spec.name);
    // One that ran in an earlier sandbox is not started again: it keeps the status it had.
    if (!observation.status && before?.containerID) return before;
    // Probes never run in them: never ready, and no `started` (as upstream leaves it unset).
    const status = { ...{}, ...containerStatus(spec as Container, observation, context, false, before), ready: false };
    delete status.started;
    return status;
  });
  const phase = ended?.phase ?? phaseOf(pod, observed, init, regular);
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
    ...(ended?.reason ? { reason: ended.reason } : {}),
    ...(ended?.message ? { message: ended.message } : {}),
    conditions,
    hostIP: context.hostIP,
    hostIPs: [{ ip: context.hostIP }],
    ...(observed.podIP ? { podIP: observed.podIP, podIPs: [{ ip: observed.podIP }] } : {}),
    startTime: pod.status?.startTime ?? context.now,
    ...(init.length ? { initContainerStatuses: init } : {}),
    containerStatuses: regular,
    ...(ephemeral.length ? { ephemeralContainerStatuses: ephemeral } : {}),
    qosClass: qosClass(pod),
  };
}

/** The status of a pod node-level admission turned away: Failed, with the admitter's reason and message. */
export function rejectedPodStatus(pod: Pod, rejection: { reason: string; message: string }, context: StatusContext): PodStatus {
  return {
    ...{},
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
  const left = new Map<string, unknown>(Object.entries(a));
  const right = new Map<string, unknown>(Object.entries(b));
  const keys = new Set([...left.keys(), ...right.keys()]);
  for (const key of keys) if (!sameStatus(left.get(key), right.get(key))) return false;
  return true;
}
