import { isKnownTimeZone, RESOURCES, type CronJob, type Job } from '@skiff/api';
import { newControllerRef } from '@skiff/controller-manager';
import { CronError, formatInZone, parseSchedule } from './cron.js';
import { conditionOf, isJobFinished } from './job-sync.js';
import { JOB_CONDITION, JOB_LABEL } from './names.js';

/** Past this many missed start times the controller warns (it still starts the latest one). */
export const MISSED_START_TIMES_LIMIT = 100;

export type ScheduleDecision =
  /** Nothing is due; look again at `nextTime`. */
  | { kind: 'wait'; nextTime?: number }
  /** A start time is due: `time` is the latest missed one, `missed` how many were missed (capped). */
  | { kind: 'start'; time: number; missed: number; nextTime?: number }
  /** The latest start time is past the starting deadline. */
  | { kind: 'tooLate'; time: number; nextTime?: number }
  | { kind: 'invalid'; reason: 'InvalidSchedule' | 'UnknownTimeZone'; message: string };

/**
 * When a CronJob should start a Job: the latest schedule time since its last scheduled run (or its
 * creation) up to now — no earlier than `startingDeadlineSeconds` ago — unless that time was already taken.
 */
export function decideSchedule(cronJob: CronJob, now: number, defaultTimeZone: string): ScheduleDecision {
  const zone = cronJob.spec.timeZone ?? defaultTimeZone;
  if (cronJob.spec.timeZone !== undefined && !isKnownTimeZone(cronJob.spec.timeZone))
    return { kind: 'invalid', reason: 'UnknownTimeZone', message: `invalid timeZone: "${cronJob.spec.timeZone}": unknown time zone ${cronJob.spec.timeZone}` };
  let schedule;
  try {
    schedule = parseSchedule(cronJob.spec.schedule, zone);
  } catch (err) {
    if (!(err instanceof CronError)) throw err;
    return { kind: 'invalid', reason: 'InvalidSchedule', message: `invalid schedule: ${cronJob.spec.schedule} : ${err.message}` };
  }
  const nextTime = schedule.next(now);
  const last = cronJob.status?.lastScheduleTime ?? cronJob.metadata.creationTimestamp;
  let earliest = last ? Date.parse(last) : now;
  const deadline = cronJob.spec.startingDeadlineSeconds;
  if (deadline !== undefined) earliest = Math.max(earliest, now - deadline * 1000);
  if (earliest > now) return { kind: 'wait', ...(nextTime === undefined ? {} : { nextTime }) };
  const latest = schedule.latest(earliest, now, MISSED_START_TIMES_LIMIT);
  if (!latest) return { kind: 'wait', ...(nextTime === undefined ? {} : { nextTime }) };
  if (deadline !== undefined && latest.time + deadline * 1000 < now)
    return { kind: 'tooLate', time: latest.time, ...(nextTime === undefined ? {} : { nextTime }) };
  return { kind: 'start', time: latest.time, missed: latest.count, ...(nextTime === undefined ? {} : { nextTime }) };
}

/** `<cronjob>-<scheduled time in minutes since the epoch>`: the same start time always gets the same name. */
export function jobNameFor(cronJob: CronJob, scheduledTime: number): string {
  return `${cronJob.metadata.name}-${Math.floor(scheduledTime / 60_000)}`;
}

/** The Job a CronJob starts for a scheduled time: the template, owned by the CronJob, annotated with the time. */
export function jobFromTemplate(cronJob: CronJob, scheduledTime: number, defaultTimeZone: string): Job {
  const template = structuredClone(cronJob.spec.jobTemplate);
  const zone = cronJob.spec.timeZone ?? /^(?:CRON_)?TZ=(\S+)/.exec(cronJob.spec.schedule)?.[1] ?? defaultTimeZone;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(cronJob, scheduledTime),
      namespace: cronJob.metadata.namespace,
      ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
      annotations: { ...{}, ...template.metadata?.annotations, [JOB_LABEL.CRONJOB_SCHEDULED_TIMESTAMP]: formatInZone(scheduledTime, zone) },
      ownerReferences: [newControllerRef(cronJob, RESOURCES.cronjobs)],
    },
    spec: template.spec,
  };
}

export function isJobSucceeded(job: Job): boolean {
  return conditionOf(job.status, JOB_CONDITION.COMPLETE)?.status === 'True';
}

/** Oldest first by start time (Jobs that never started last), then by name. */
function byStartTime(a: Job, b: Job): number {
  const startA = a.status?.startTime;
  const startB = b.status?.startTime;
  if (startA !== startB) {
    if (!startA) return 1;
    if (!startB) return -1;
    return Date.parse(startA) - Date.parse(startB);
  }
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** Finished Jobs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`, oldest first. */
export function jobsBeyondHistory(cronJob: CronJob, jobs: readonly Job[]): Job[] {
  const { successfulJobsHistoryLimit: successLimit, failedJobsHistoryLimit: failedLimit } = cronJob.spec;
  const finished = jobs.filter((job) => isJobFinished(job) && !job.metadata.deletionTimestamp);
  const excess = (list: Job[], limit: number | undefined) => (limit === undefined ? [] : list.sort(byStartTime).slice(0, Math.max(0, list.length - limit)));
  return [
    ...excess(
      finished.filter((job) => isJobSucceeded(job)),
      successLimit,
    ),
    ...excess(
      finished.filter((job) => !isJobSucceeded(job)),
      failedLimit,
    ),
  ];
}

/** The time a Job finished successfully, for `lastSuccessfulTime`. */
export function completionTimeOf(job: Job): string | undefined {
  return job.status?.completionTime ?? (isJobSucceeded(job) ? (conditionOf(job.status, JOB_CONDITION.COMPLETE)?.lastTransitionTime ?? undefined) : undefined);
}

/** RFC 1123 with a numeric zone, as Go's time.RFC1123Z prints it (the MissSchedule event). */
export function rfc1123z(time: number): string {
  const date = new Date(time);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${days[date.getUTCDay()]}, ${pad(date.getUTCDate())} ${months[date.getUTCMonth()]} ${date.getUTCFullYear()} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}
