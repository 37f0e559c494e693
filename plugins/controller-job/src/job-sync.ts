import { isPodReady, type Job, type JobCondition, type JobStatus, type Pod } from '@skiff/api';
import { isPodActive, kubeTime } from '@skiff/controller-manager';
import { nextBackoffRecord, remainingBackoffMs, type BackoffRecord } from './backoff.js';
import { formatIndexes, parseIndexes } from './indexes.js';
import { EVENT_REASON, JOB_CONDITION, JOB_FINISH, JOB_SUSPEND, MAX_POD_CREATE_DELETE_PER_SYNC } from './names.js';
import { matchPodFailurePolicy } from './pod-failure-policy.js';
import { compareForDeletion, finishTime, hasTrackingFinalizer, isFailed, isSucceeded, isTerminating, podIndex, restartsOf } from './pods.js';

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Why a Job is finishing: the interim condition it has (or gets) and the terminal one it will get. */
export interface Finishing {
  interim: typeof JOB_CONDITION.SUCCESS_CRITERIA_MET | typeof JOB_CONDITION.FAILURE_TARGET;
  terminal: typeof JOB_CONDITION.COMPLETE | typeof JOB_CONDITION.FAILED;
  reason: string;
  message: string;
}

export interface JobSyncInput {
  job: Job;
  /** The pods the Job owns, finished or not. */
  pods: readonly Pod[];
  now: number;
  /** Pods (by uid) whose tracking finalizer the controller removed but the cache may still show. */
  releasing: ReadonlySet<string>;
  /** Whether the cache shows every pod the controller created or deleted: only then may it create or delete more. */
  expectationsSatisfied: boolean;
  backoff: BackoffRecord;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export interface JobPlan {
  /**
   * The status to write before any finalizer is removed: the newly finished pods recorded in
   * `uncountedTerminatedPods` (or `completedIndexes`), so a crash between the two steps loses no count.
   * Undefined when there is nothing new to record.
   */
  record?: JobStatus;
  /** The status after this sync, with the uncounted pods still uncounted (see `settleStatus`). */
  status: JobStatus;
  /** Finished pods whose tracking finalizer is to be removed. */
  release: Pod[];
  /** Active pods to delete (surplus, or all of them when the Job is finishing or suspended). */
  remove: Pod[];
  /** How many pods to create (NonIndexed). */
  create: number;
  /** Which indexes to create pods for (Indexed). */
  createIndexes: number[];
  finishing?: Finishing;
  backoff: BackoffRecord;
  /** Sync again after this long even if nothing changes (backoff, active deadline). */
  requeueAfterMs?: number;
  events: PlannedEvent[];
}

export function isIndexed(job: Job): boolean {
  return job.spec.completionMode === 'Indexed';
}

export function conditionOf(status: JobStatus | undefined, type: string): JobCondition | undefined {
  return status?.conditions?.find((condition) => condition.type === type);
}

function conditionTrue(status: JobStatus | undefined, type: string): boolean {
  return conditionOf(status, type)?.status === 'True';
}

/** Finished: a Complete or Failed condition that is True. Nothing happens to a finished Job any more. */
export function isJobFinished(job: Job): boolean {
  return conditionTrue(job.status, JOB_CONDITION.COMPLETE) || conditionTrue(job.status, JOB_CONDITION.FAILED);
}

/** Sets a condition; the transition time (and probe time) change only when its status, reason or message does. */
export function setCondition(status: JobStatus, type: string, value: 'True' | 'False', reason: string, message: string, now: number): boolean {
  const conditions = (status.conditions ??= []);
  const existing = conditions.find((condition) => condition.type === type);
  if (existing && existing.status === value && existing.reason === reason && existing.message === message) return false;
  const time = kubeTime(now);
  const next: JobCondition = { type, status: value, lastProbeTime: time, lastTransitionTime: time, reason, message };
  if (existing) conditions.splice(conditions.indexOf(existing), 1, next);
  else conditions.push(next);
  return true;
}

function finishingFromConditions(status: JobStatus | undefined): Finishing | undefined {
  const failure = conditionOf(status, JOB_CONDITION.FAILURE_TARGET);
  if (failure?.status === 'True')
    return { interim: JOB_CONDITION.FAILURE_TARGET, terminal: JOB_CONDITION.FAILED, reason: failure.reason ?? '', message: failure.message ?? '' };
  const success = conditionOf(status, JOB_CONDITION.SUCCESS_CRITERIA_MET);
  if (success?.status === 'True')
    return { interim: JOB_CONDITION.SUCCESS_CRITERIA_MET, terminal: JOB_CONDITION.COMPLETE, reason: success.reason ?? '', message: success.message ?? '' };
  return undefined;
}

const failing = (finish: { reason: string; message: string }): Finishing => ({
  interim: JOB_CONDITION.FAILURE_TARGET,
  terminal: JOB_CONDITION.FAILED,
  ...finish,
});

/** Past `activeDeadlineSeconds` since it started (a suspended Job's clock is stopped). */
export function deadlineRemainingMs(job: Job, now: number): number | undefined {
  const deadline = job.spec.activeDeadlineSeconds;
  const start = job.status?.startTime;
  if (deadline === undefined || !start || job.spec.suspend) return undefined;
  return Date.parse(start) + deadline * 1000 - now;
}

/** Restarts of an OnFailure Job's running pods have reached the backoff limit. */
function pastBackoffLimitOnFailure(job: Job, pods: readonly Pod[]): boolean {
  if (job.spec.template.spec.restartPolicy !== 'OnFailure') return false;
  const limit = job.spec.backoffLimit ?? 6;
  const restarts = pods.reduce((sum, pod) => sum + restartsOf(pod), 0);
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/**
 * One pass of the Job controller over a Job and its pods, as decisions only: which finished pods to
 * count (and release), which pods to create or delete, which conditions the Job gets.
 */
export function planJob(input: JobSyncInput): JobPlan {
  const { job, pods, now, releasing } = input;
  const events: PlannedEvent[] = [];
  const status: JobStatus = structuredClone(job.status ?? {});
  const previousUncounted = status.uncountedTerminatedPods ?? {};
  const uncountedSucceeded = [...(previousUncounted.succeeded ?? [])];
  const uncountedFailed = [...(previousUncounted.failed ?? [])];
  const indexed = isIndexed(job);
  const completions = job.spec.completions;
  const suspended = job.spec.suspend === true;
  let finishing = finishingFromConditions(job.status);

  // Count what finished: pods still held by the finalizer, not already being released.
  const completedIndexes = indexed ? parseIndexes(status.completedIndexes, completions ?? 0) : new Set<number>();
  const completedBefore = completedIndexes.size;
  const release: Pod[] = [];
  const successTimes: number[] = [];
  const failureTimes: number[] = [];
  let recordNeeded = false;
  for (const pod of pods) {
    const uid = pod.metadata.uid!;
    if (!hasTrackingFinalizer(pod) || releasing.has(uid)) continue;
    if (isSucceeded(pod) && !uncountedFailed.includes(uid)) {
      if (indexed) {
        const index = podIndex(pod);
        if (index !== undefined && index < (completions ?? 0) && !completedIndexes.has(index)) {
          completedIndexes.add(index);
          successTimes.push(finishTime(pod, now));
        }
      } else if (!uncountedSucceeded.includes(uid)) {
        uncountedSucceeded.push(uid);
        successTimes.push(finishTime(pod, now));
        recordNeeded = true;
      }
      release.push(pod);
    } else if (isFailed(pod)) {
      // Pods taken away by a suspension, or cut short once the Job succeeded, are not failures; nor are
      // pods a podFailurePolicy rule ignores. A FailJob rule fails the Job at once.
      const rule = pod.status?.phase === 'Failed' ? matchPodFailurePolicy(job.spec.podFailurePolicy, pod) : undefined;
      if (rule?.action === 'FailJob' && !finishing && !uncountedFailed.includes(uid)) {
        finishing = failing({ reason: 'PodFailurePolicy', message: rule.message });
        setCondition(status, finishing.interim, 'True', finishing.reason, finishing.message, now);
      }
      const counts = !(suspended && isTerminating(pod)) && finishing?.terminal !== JOB_CONDITION.COMPLETE && rule?.action !== 'Ignore';
      if (counts && !uncountedFailed.includes(uid)) {
        uncountedFailed.push(uid);
        failureTimes.push(finishTime(pod, now));
        recordNeeded = true;
      }
      release.push(pod);
    }
  }
  if (completedIndexes.size !== completedBefore) recordNeeded = true;
  const backoff = nextBackoffRecord(input.backoff, successTimes, failureTimes);

  const succeeded = indexed ? completedIndexes.size : (status.succeeded ?? 0) + uncountedSucceeded.length;
  const failed = (status.failed ?? 0) + uncountedFailed.length;
  const active = pods.filter(isPodActive);
  const terminating = pods.filter(isTerminating).length;

  // Decide whether the Job is finishing.
  if (!finishing) {
    const deadline = deadlineRemainingMs(job, now);
    if (failed > (job.spec.backoffLimit ?? 6) || pastBackoffLimitOnFailure(job, active)) finishing = failing(JOB_FINISH.BACKOFF_LIMIT_EXCEEDED);
    else if (deadline !== undefined && deadline <= 0) finishing = failing(JOB_FINISH.DEADLINE_EXCEEDED);
    else if (completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0)
      finishing = { interim: JOB_CONDITION.SUCCESS_CRITERIA_MET, terminal: JOB_CONDITION.COMPLETE, ...JOB_FINISH.COMPLETIONS_REACHED };
    if (finishing) {
      setCondition(status, finishing.interim, 'True', finishing.reason, finishing.message, now);
      recordNeeded = true;
    }
  }

  // Suspension: a condition and an event each way; a resumed Job's active deadline starts over.
  const suspendedCondition = conditionOf(status, JOB_CONDITION.SUSPENDED);
  if (!finishing && suspended && suspendedCondition?.status !== 'True') {
    setCondition(status, JOB_CONDITION.SUSPENDED, 'True', JOB_SUSPEND.SUSPENDED.reason, JOB_SUSPEND.SUSPENDED.message, now);
    events.push({ type: 'Normal', reason: EVENT_REASON.SUSPENDED, message: JOB_SUSPEND.SUSPENDED.message });
    delete status.startTime;
  } else if (!suspended && suspendedCondition?.status === 'True') {
    setCondition(status, JOB_CONDITION.SUSPENDED, 'False', JOB_SUSPEND.RESUMED.reason, JOB_SUSPEND.RESUMED.message, now);
    events.push({ type: 'Normal', reason: EVENT_REASON.RESUMED, message: JOB_SUSPEND.RESUMED.message });
    status.startTime = kubeTime(now);
  }
  if (!status.startTime && !suspended) status.startTime = kubeTime(now);

  // Decide which pods to create or delete.
  let remove: Pod[] = [];
  let create = 0;
  const createIndexes: number[] = [];
  let requeueAfterMs: number | undefined;
  if (finishing || suspended) {
    remove = [...active];
  } else if (input.expectationsSatisfied) {
    const parallelism = job.spec.parallelism ?? 1;
    let wantActive: number;
    if (completions === undefined) wantActive = succeeded > 0 ? active.length : parallelism;
    else wantActive = Math.max(0, Math.min(completions - succeeded, parallelism));
    let keep = active;
    if (indexed) {
      // Pods of completed, invalid or duplicated indexes go; each pending index keeps one pod.
      const seen = new Set<number>();
      keep = [];
      for (const pod of [...active].sort((a, b) => compareForDeletion(b, a))) {
        const index = podIndex(pod);
        if (index === undefined || index >= (completions ?? 0) || completedIndexes.has(index) || seen.has(index)) remove.push(pod);
        else {
          seen.add(index);
          keep.push(pod);
        }
      }
    }
    if (keep.length > wantActive) {
      const surplus = [...keep].sort(compareForDeletion).slice(0, Math.min(keep.length - wantActive, MAX_POD_CREATE_DELETE_PER_SYNC));
      remove.push(...surplus);
      keep = keep.filter((pod) => !surplus.includes(pod));
    }
    // With podReplacementPolicy Failed, a pod on its way out still holds its place.
    const occupied = keep.length + (job.spec.podReplacementPolicy === 'Failed' ? terminating : 0);
    const missing = Math.min(wantActive - occupied, MAX_POD_CREATE_DELETE_PER_SYNC);
    if (missing > 0) {
      const wait = remainingBackoffMs(backoff, now, input.backoffBaseMs, input.backoffMaxMs);
      if (wait > 0) requeueAfterMs = wait;
      else if (indexed) {
        const taken = new Set(keep.map((pod) => podIndex(pod)!));
        for (let index = 0; index < (completions ?? 0) && createIndexes.length < missing; index++) {
          if (!completedIndexes.has(index) && !taken.has(index)) createIndexes.push(index);
        }
      } else create = missing;
    }
  }
  if (!finishing) {
    const deadline = deadlineRemainingMs(job, now);
    if (deadline !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, deadline);
  }

  status.active = active.length - remove.filter(isPodActive).length + create + createIndexes.length;
  status.ready = active.filter((pod) => isPodReady(pod) && !remove.includes(pod)).length;
  status.terminating = terminating + remove.length;
  if (indexed) {
    const formatted = formatIndexes(completedIndexes);
    if (formatted) status.completedIndexes = formatted;
    else delete status.completedIndexes;
    status.succeeded = succeeded;
  }
  status.uncountedTerminatedPods = {
    ...{},
    ...(uncountedSucceeded.length ? { succeeded: uncountedSucceeded } : {}),
    ...(uncountedFailed.length ? { failed: uncountedFailed } : {}),
  };
  return {
    ...{},
    ...(recordNeeded ? { record: structuredClone(status) } : {}),
    status,
    release,
    remove,
    create,
    createIndexes,
    ...(finishing ? { finishing } : {}),
    backoff,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs: Math.max(0, requeueAfterMs) } : {}),
    events,
  };
}

/**
 * The status once the finalizers are off: uncounted pods that no finalizer holds any more move into
 * `succeeded` / `failed`, and a finishing Job with no pod left running, terminating or uncounted gets
 * its terminal condition (and, when complete, its completion time).
 */
export function settleStatus(
  planned: JobStatus,
  stillHeld: ReadonlySet<string>,
  finishing: Finishing | undefined,
  now: number,
  indexed: boolean,
): { status: JobStatus; events: PlannedEvent[] } {
  const status = structuredClone(planned);
  const uncounted = status.uncountedTerminatedPods ?? {};
  const succeeded = (uncounted.succeeded ?? []).filter((uid) => stillHeld.has(uid));
  const failed = (uncounted.failed ?? []).filter((uid) => stillHeld.has(uid));
  if (!indexed) status.succeeded = (status.succeeded ?? 0) + (uncounted.succeeded ?? []).length - succeeded.length;
  status.failed = (status.failed ?? 0) + (uncounted.failed ?? []).length - failed.length;
  status.uncountedTerminatedPods = { ...{}, ...(succeeded.length ? { succeeded } : {}), ...(failed.length ? { failed } : {}) };
  if (!status.succeeded) delete status.succeeded;
  if (!status.failed) delete status.failed;
  const events: PlannedEvent[] = [];
  const settled = succeeded.length === 0 && failed.length === 0 && stillHeld.size === 0 && !status.active && !status.terminating;
  if (finishing && settled && !conditionTrue(status, finishing.terminal)) {
    setCondition(status, finishing.terminal, 'True', finishing.reason, finishing.message, now);
    if (finishing.terminal === JOB_CONDITION.COMPLETE) {
      status.completionTime = kubeTime(now);
      events.push({ type: 'Normal', reason: EVENT_REASON.COMPLETED, message: 'Job completed' });
    } else events.push({ type: 'Warning', reason: finishing.reason, message: finishing.message });
  }
  return { status, events };
}
