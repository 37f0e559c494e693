import { errorMessage, isApiError, RESOURCES, type CronJob, type CronJobStatus, type Job, type ObjectReference } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { byControllerUid, canonicalJson, CONTROLLER_UID_INDEX, controllerRefOf, kubeTime, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import {
  completionTimeOf,
  decideSchedule,
  isJobSucceeded,
  jobFromTemplate,
  jobNameFor,
  jobsBeyondHistory,
  rfc1123z,
  MISSED_START_TIMES_LIMIT,
} from './cronjob-sync.js';
import { isJobFinished } from './job-sync.js';
import { CRONJOB_CONTROLLER_NAME, EVENT_REASON, JOB_CONDITION } from './names.js';

export interface CronJobControllerOptions {
  now?: () => number;
  /** The zone of schedules without `timeZone` or `CRON_TZ=` (kube-controller-manager uses its own local zone). */
  defaultTimeZone?: string;
}

/** The process's local time zone, as an IANA name. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

function referenceTo(job: Job): ObjectReference {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: job.metadata.name!,
    namespace: job.metadata.namespace!,
    uid: job.metadata.uid!,
    resourceVersion: job.metadata.resourceVersion!,
  };
}

/**
 * Starts a Job for every CronJob at each time its schedule names (in its time zone), honouring the
 * starting deadline, the concurrency policy and suspension; tracks its active Jobs and last schedule and
 * success times, and deletes finished Jobs beyond the history limits.
 */
export class CronJobController {
  private readonly queue = new WorkQueue<string>({ name: CRONJOB_CONTROLLER_NAME });
  private readonly cronJobs: Informer<CronJob>;
  private readonly jobs: Informer<Job>;
  private readonly now: () => number;
  private readonly defaultTimeZone: string;
  /** Jobs already reported as unexpected (the report would otherwise come with every sync). */
  private readonly reportedUnexpected = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    options: CronJobControllerOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.defaultTimeZone = options.defaultTimeZone ?? localTimeZone();
    this.cronJobs = ctx.informers.informer<CronJob>(RESOURCES.cronjobs);
    this.jobs = ctx.informers.informer<Job>(RESOURCES.jobs);
    this.jobs.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.cronJobs.addHandlers({
      add: (cronJob) => this.queue.add(objectKey(cronJob)),
      update: (_old, cronJob) => this.queue.add(objectKey(cronJob)),
    });
    const jobChanged = (job: Job) => {
      const owner = this.ownerOf(job);
      if (owner) this.queue.add(objectKey(owner));
    };
    this.jobs.addHandlers({ add: jobChanged, update: (_old, job) => jobChanged(job), delete: jobChanged });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.cronJobs, this.jobs], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  /** Queues every CronJob (after the clock moved, in tests). */
  resyncAll(): void {
    for (const cronJob of this.cronJobs.list()) this.queue.add(objectKey(cronJob));
  }

  async sync(key: string): Promise<void> {
    const cronJob = this.cronJobs.get(key);
    if (!cronJob) return;
    const now = this.now();
    const status: CronJobStatus = structuredClone(cronJob.status ?? {});
    const jobs = this.jobs.byIndex(CONTROLLER_UID_INDEX, cronJob.metadata.uid!);
    await this.reconcileActive(cronJob, status, jobs);

    let requeueAt: number | undefined;
    let failure: unknown;
    if (!cronJob.metadata.deletionTimestamp && !cronJob.spec.suspend) {
      try {
        requeueAt = await this.schedule(cronJob, status, now);
      } catch (err) {
        failure = err;
      }
    }
    await this.pruneHistory(cronJob, status, jobs);
    await this.writeStatus(cronJob, status);
    if (failure) throw failure;
    if (requeueAt !== undefined) this.queue.addAfter(key, Math.max(0, requeueAt - now) + 100);
  }

  /** Drops finished and vanished Jobs from `status.active` and records the latest success. */
  private async reconcileActive(cronJob: CronJob, status: CronJobStatus, jobs: readonly Job[]): Promise<void> {
    const owned = new Set(jobs.map((job) => job.metadata.uid));
    const active: ObjectReference[] = [];
    for (const ref of status.active ?? []) {
      if (owned.has(ref.uid)) {
        active.push(ref);
        continue;
      }
      // The cache may not have a Job this controller just created: ask the API server.
      const live = await this.ctx.client.get<Job>(RESOURCES.jobs, ref.name!, cronJob.metadata.namespace).catch((err: unknown) => {
        if (isApiError(err, 'NotFound')) return undefined;
        throw err;
      });
      if (live?.metadata.uid === ref.uid) active.push(ref);
      else this.ctx.recorder.event(cronJob, 'Normal', EVENT_REASON.MISSING_JOB, `Active job went missing: ${ref.name}`);
    }
    status.active = active;
    for (const job of jobs) {
      const listed = active.some((ref) => ref.uid === job.metadata.uid);
      const finished = isJobFinished(job);
      if (listed && finished) {
        status.active = status.active.filter((ref) => ref.uid !== job.metadata.uid);
        const condition = isJobSucceeded(job) ? JOB_CONDITION.COMPLETE : JOB_CONDITION.FAILED;
        this.ctx.recorder.event(cronJob, 'Normal', EVENT_REASON.SAW_COMPLETED_JOB, `Saw completed job: ${job.metadata.name}, condition: ${condition}`);
      } else if (!listed && !finished && !this.reportedUnexpected.has(job.metadata.uid!)) {
        this.reportedUnexpected.add(job.metadata.uid!);
        this.ctx.recorder.event(
          cronJob,
          'Warning',
          EVENT_REASON.UNEXPECTED_JOB,
          `Saw a job that the controller did not create or forgot: ${job.metadata.name}`,
        );
      }
      const completed = completionTimeOf(job);
      if (completed && (!status.lastSuccessfulTime || Date.parse(completed) > Date.parse(status.lastSuccessfulTime))) status.lastSuccessfulTime = completed;
    }
  }

  /** Starts the Job that is due, if any; answers when to look again. */
  private async schedule(cronJob: CronJob, status: CronJobStatus, now: number): Promise<number | undefined> {
    const decision = decideSchedule({ ...{}, ...cronJob, status }, now, this.defaultTimeZone);
    if (decision.kind === 'invalid') {
      this.ctx.recorder.event(cronJob, 'Warning', decision.reason, decision.message);
      return undefined;
    }
    if (decision.kind === 'wait') return decision.nextTime;
    if (decision.kind === 'tooLate') {
      this.ctx.recorder.event(cronJob, 'Warning', EVENT_REASON.MISS_SCHEDULE, `Missed scheduled time to start a job: ${rfc1123z(decision.time)}`);
      return decision.nextTime;
    }
    if (decision.missed > MISSED_START_TIMES_LIMIT)
      this.ctx.recorder.event(
        cronJob,
        'Warning',
        EVENT_REASON.TOO_MANY_MISSED_TIMES,
        `too many missed start times: ${decision.missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`,
      );
    const name = jobNameFor(cronJob, decision.time);
    const active = status.active ?? [];
    if (active.some((ref) => ref.name === name) || (status.lastScheduleTime && Date.parse(status.lastScheduleTime) === decision.time)) return decision.nextTime;
    if (cronJob.spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
      this.ctx.recorder.event(
        cronJob,
        'Normal',
        EVENT_REASON.JOB_ALREADY_ACTIVE,
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return decision.nextTime;
    }
    if (cronJob.spec.concurrencyPolicy === 'Replace') {
      for (const ref of active) {
        await this.deleteJob(cronJob, ref.name!);
        status.active = (status.active ?? []).filter((other) => other.uid !== ref.uid);
      }
    }
    const job = await this.createJob(cronJob, decision.time);
    if (job) {
      if (!isJobFinished(job) && !(status.active ?? []).some((ref) => ref.uid === job.metadata.uid))
        status.active = [...(status.active ?? []), referenceTo(job)];
      status.lastScheduleTime = kubeTime(decision.time);
    }
    return decision.nextTime;
  }

  /** The Job as created, or as found when it already existed and is this CronJob's. */
  private async createJob(cronJob: CronJob, time: number): Promise<Job | undefined> {
    const job = jobFromTemplate(cronJob, time, this.defaultTimeZone);
    try {
      const created = await this.ctx.client.create<Job>(RESOURCES.jobs, job, cronJob.metadata.namespace);
      this.ctx.recorder.event(cronJob, 'Normal', EVENT_REASON.CREATED, `Created job ${created.metadata.name}`);
      return created;
    } catch (err) {
      if (isApiError(err, 'AlreadyExists')) {
        // Created by an earlier sync whose status write was lost: take it up again.
        const existing = await this.ctx.client.get<Job>(RESOURCES.jobs, job.metadata.name!, cronJob.metadata.namespace);
        if (controllerRefOf(existing)?.uid === cronJob.metadata.uid) return existing;
        throw err;
      }
      this.ctx.recorder.event(cronJob, 'Warning', EVENT_REASON.CREATE_FAILED, `Error creating job: ${errorMessage(err)}`);
      throw err;
    }
  }

  private async deleteJob(cronJob: CronJob, name: string): Promise<void> {
    try {
      await this.ctx.client.delete(RESOURCES.jobs, name, cronJob.metadata.namespace, { propagationPolicy: 'Background' });
      this.ctx.recorder.event(cronJob, 'Normal', EVENT_REASON.DELETED, `Deleted job ${name}`);
    } catch (err) {
      if (isApiError(err, 'NotFound')) return;
      this.ctx.recorder.event(cronJob, 'Warning', EVENT_REASON.DELETE_FAILED, `Deleted job: ${errorMessage(err)}`);
      throw err;
    }
  }

  private async pruneHistory(cronJob: CronJob, status: CronJobStatus, jobs: readonly Job[]): Promise<void> {
    for (const job of jobsBeyondHistory(cronJob, jobs)) {
      await this.deleteJob(cronJob, job.metadata.name!);
      status.active = (status.active ?? []).filter((ref) => ref.uid !== job.metadata.uid);
    }
  }

  private async writeStatus(cronJob: CronJob, status: CronJobStatus): Promise<void> {
    if (!status.active?.length) delete status.active;
    if (canonicalJson(cronJob.status ?? {}) === canonicalJson(status)) return;
    try {
      await this.ctx.client.updateStatus<CronJob>(RESOURCES.cronjobs, { ...{}, ...structuredClone(cronJob), status });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }

  private ownerOf(job: Job): CronJob | undefined {
    const ref = controllerRefOf(job);
    if (!ref || ref.kind !== RESOURCES.cronjobs.kind) return undefined;
    const cronJob = this.cronJobs.get(`${job.metadata.namespace}/${ref.name}`);
    return cronJob?.metadata.uid === ref.uid ? cronJob : undefined;
  }
}
