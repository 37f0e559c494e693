import { errorMessage, isApiError, labelSelectorFromObject, RESOURCES, type Job, type JobStatus, type OwnerReference, type Pod } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import {
  byControllerUid,
  claimCandidates,
  CONTROLLER_UID_INDEX,
  controllerRefOf,
  ControllerRefManager,
  Expectations,
  newControllerRef,
  ORPHAN_NAMESPACE_INDEX,
  orphansByNamespace,
  resolveControllerRef,
  runWhenSynced,
  type JsonPatchOperation,
  canonicalJson,
} from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { NO_BACKOFF, type BackoffRecord } from './backoff.js';
import { isIndexed, isJobFinished, planJob, settleStatus, type PlannedEvent } from './job-sync.js';
import {
  DEFAULT_POD_FAILURE_BACKOFF_MS,
  EVENT_REASON,
  JOB_CONTROLLER_MANAGER,
  JOB_CONTROLLER_NAME,
  JOB_TRACKING_FINALIZER,
  MAX_POD_FAILURE_BACKOFF_MS,
} from './names.js';
import { podForJob } from './pod-template.js';
import { hasTrackingFinalizer } from './pods.js';

export interface JobControllerOptions {
  now?: () => number;
  /** First delay before a failed pod is replaced; doubles per further failure. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/** The JSON patch that takes the job-tracking finalizer off a pod, only if it is still where we saw it. */
export function releasePatch(pod: Pod): JsonPatchOperation[] {
  const index = pod.metadata.finalizers!.indexOf(JOB_TRACKING_FINALIZER);
  return [
    { op: 'test', path: '/metadata/uid', value: pod.metadata.uid },
    { op: 'test', path: `/metadata/finalizers/${index}`, value: JOB_TRACKING_FINALIZER },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ];
}

/**
 * Runs every Job to completion: creates its pods (in parallel up to `parallelism`, one per index for
 * Indexed Jobs), counts finished pods through the job-tracking finalizer, replaces failed ones after an
 * exponential backoff, and finishes the Job when enough succeeded or when it failed too often or ran
 * too long.
 */
export class JobController {
  private readonly queue = new WorkQueue<string>({ name: JOB_CONTROLLER_NAME });
  /** Pods holding the finalizer whose Job is gone or finished. */
  private readonly orphans = new WorkQueue<string>({ name: `${JOB_CONTROLLER_NAME}-orphan-pods` });
  private readonly jobs: Informer<Job>;
  private readonly pods: Informer<Pod>;
  private readonly expectations: Expectations;
  private readonly now: () => number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly backoffs = new Map<string, { uid: string; record: BackoffRecord }>();
  /** Per Job key: pods whose finalizer we removed and the cache may still show. */
  private readonly releasing = new Map<string, Set<string>>();

  constructor(
    private readonly ctx: ControllerContext,
    options: JobControllerOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.backoffBaseMs = options.backoffBaseMs ?? DEFAULT_POD_FAILURE_BACKOFF_MS;
    this.backoffMaxMs = options.backoffMaxMs ?? MAX_POD_FAILURE_BACKOFF_MS;
    this.expectations = new Expectations(this.now);
    this.jobs = ctx.informers.informer<Job>(RESOURCES.jobs);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.pods.addIndex(CONTROLLER_UID_INDEX, byControllerUid);
    this.pods.addIndex(ORPHAN_NAMESPACE_INDEX, orphansByNamespace);
    this.jobs.addHandlers({
      add: (job) => this.queue.add(objectKey(job)),
      update: (_old, job) => this.queue.add(objectKey(job)),
      delete: (job) => {
        this.queue.add(objectKey(job));
        for (const pod of this.pods.byIndex(CONTROLLER_UID_INDEX, job.metadata.uid!)) this.checkOrphan(pod);
      },
    });
    this.pods.addHandlers({
      add: (pod) => this.podAdded(pod),
      update: (oldPod, pod) => this.podUpdated(oldPod, pod),
      delete: (pod) => this.podDeleted(pod),
    });
  }

  run(workers: number): Promise<void> {
    const informers = [this.jobs, this.pods];
    return Promise.all([
      runWhenSynced(this.ctx, { informers, queue: this.queue, workers, sync: (key) => this.sync(key) }),
      runWhenSynced(this.ctx, {
        informers,
        queue: this.orphans,
        workers: 1,
        sync: (key) => this.syncOrphan(key),
        beforeWorkers: () => this.pods.list().forEach((pod) => this.checkOrphan(pod)),
      }),
    ]).then(() => undefined);
  }

  async sync(key: string): Promise<void> {
    const job = this.jobs.get(key);
    if (!job) {
      this.expectations.forget(key);
      this.backoffs.delete(key);
      this.releasing.delete(key);
      return;
    }
    if (job.spec.managedBy !== undefined && job.spec.managedBy !== JOB_CONTROLLER_MANAGER) return;
    const pods = await this.claimPods(job);
    if (job.metadata.deletionTimestamp || isJobFinished(job)) {
      await this.release(job, pods.filter(hasTrackingFinalizer));
      return;
    }
    const now = this.now();
    const releasing = this.releasingFor(key, pods);
    const backoff = this.backoffs.get(key);
    const plan = planJob({
      job,
      pods,
      now,
      releasing,
      expectationsSatisfied: this.expectations.satisfied(key),
      backoff: backoff && backoff.uid === job.metadata.uid ? backoff.record : NO_BACKOFF,
      backoffBaseMs: this.backoffBaseMs,
      backoffMaxMs: this.backoffMaxMs,
    });
    this.backoffs.set(key, { uid: job.metadata.uid!, record: plan.backoff });

    let current = job;
    // Record the newly finished pods before their finalizers go: then no count can be lost.
    if (plan.record) current = await this.writeStatus(current, plan.record);
    const releaseFailure = await this.release(job, plan.release).catch((err: unknown) => err);

    const deleteFailure = await this.deletePods(job, plan.remove);
    const created = await this.createPods(job, plan.create, plan.createIndexes);
    const stillHeld = new Set(pods.filter((pod) => hasTrackingFinalizer(pod) && !releasing.has(pod.metadata.uid!)).map((pod) => pod.metadata.uid!));
    const planned = plan.status;
    if (created.failed > 0) planned.active = (planned.active ?? 0) - created.failed;
    const settled = settleStatus(planned, stillHeld, plan.finishing, now, isIndexed(job));
    if (!settled.status.active) delete settled.status.active;
    await this.writeStatus(current, settled.status);
    this.emit(job, [...plan.events, ...settled.events]);

    const failure = releaseFailure ?? deleteFailure ?? created.error;
    if (failure) throw failure;
    if (plan.requeueAfterMs !== undefined) this.queue.addAfter(key, plan.requeueAfterMs + 100);
  }

  /** Takes the finalizer off pods whose Job is gone, finished or being deleted. */
  async syncOrphan(podKey: string): Promise<void> {
    const pod = this.pods.get(podKey);
    if (!pod || !hasTrackingFinalizer(pod)) return;
    const ref = controllerRefOf(pod);
    if (ref && this.isJobRef(ref)) {
      const job = this.jobs.get(`${pod.metadata.namespace}/${ref.name}`);
      if (job?.metadata.uid === ref.uid && !isJobFinished(job) && !job.metadata.deletionTimestamp) return;
      if (!job) {
        // The cache may lag behind a new Job: ask the API server before letting the pod go.
        const live = await this.ctx.client.get<Job>(RESOURCES.jobs, ref.name, pod.metadata.namespace).catch((err: unknown) => {
          if (isApiError(err, 'NotFound')) return undefined;
          throw err;
        });
        if (live?.metadata.uid === ref.uid && !isJobFinished(live) && !live.metadata.deletionTimestamp) return;
      }
    }
    await this.patchFinalizer(pod);
  }

  private async claimPods(job: Job): Promise<Pod[]> {
    const selector = labelSelectorFromObject(job.spec.selector);
    return new ControllerRefManager<Pod>({
      client: this.ctx.client,
      controller: job,
      controllerType: RESOURCES.jobs,
      type: RESOURCES.pods,
      matches: (pod) => selector.matches(pod.metadata.labels ?? {}),
    }).claim(claimCandidates(this.pods, job));
  }

  /** The uids still being released for this Job, dropping those the cache shows done. */
  private releasingFor(key: string, pods: readonly Pod[]): Set<string> {
    const held = new Set(pods.filter(hasTrackingFinalizer).map((pod) => pod.metadata.uid!));
    const releasing = new Set([...(this.releasing.get(key) ?? [])].filter((uid) => held.has(uid)));
    this.releasing.set(key, releasing);
    return releasing;
  }

  /** Removes the tracking finalizer from each pod; the removed ones are remembered until the cache shows it. */
  private async release(job: Job, pods: readonly Pod[]): Promise<void> {
    if (pods.length === 0) return;
    const key = objectKey(job);
    const releasing = this.releasing.get(key) ?? new Set<string>();
    this.releasing.set(key, releasing);
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        await this.patchFinalizer(pod);
        releasing.add(pod.metadata.uid!);
      }),
    );
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async patchFinalizer(pod: Pod): Promise<void> {
    try {
      await this.ctx.client.patch(RESOURCES.pods, pod.metadata.name!, releasePatch(pod), { namespace: pod.metadata.namespace, patchType: 'json' });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }

  private async deletePods(job: Job, pods: readonly Pod[]): Promise<unknown> {
    if (pods.length === 0) return undefined;
    const key = objectKey(job);
    this.expectations.expect(key, 0, pods.map(objectKey));
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        try {
          await this.ctx.client.delete(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace, { preconditions: { uid: pod.metadata.uid! } });
          this.ctx.recorder.event(job, 'Normal', EVENT_REASON.DELETED, `Deleted pod: ${pod.metadata.name}`);
        } catch (err) {
          this.expectations.deletionObserved(key, objectKey(pod));
          if (isApiError(err, 'NotFound')) return;
          this.ctx.recorder.event(job, 'Warning', EVENT_REASON.DELETE_FAILED, `Error deleting: ${errorMessage(err)}`);
          throw err;
        }
      }),
    );
    return results.find((result): result is PromiseRejectedResult => result.status === 'rejected')?.reason;
  }

  /**
   * Creates pods in batches of 1, 2, 4, … that stop at the first failure (a quota, say, fails them all);
   * answers how many were not created.
   */
  private async createPods(job: Job, count: number, indexes: readonly number[]): Promise<{ failed: number; error?: unknown }> {
    const wanted: (number | undefined)[] = indexes.length > 0 ? [...indexes] : Array.from({ length: count }, () => undefined);
    if (wanted.length === 0) return { failed: 0 };
    const key = objectKey(job);
    this.expectations.expect(key, wanted.length, []);
    const controllerRef = newControllerRef(job, RESOURCES.jobs);
    let created = 0;
    let next = 0;
    let error: unknown;
    for (let batch = 1; next < wanted.length && error === undefined; batch *= 2) {
      const slice = wanted.slice(next, next + batch);
      next += slice.length;
      const results = await Promise.allSettled(slice.map((index) => this.createPod(job, controllerRef, index)));
      for (const result of results) {
        if (result.status === 'fulfilled') created += 1;
        else error ??= result.reason;
      }
    }
    for (let missing = wanted.length - created; missing > 0; missing--) this.expectations.creationObserved(key);
    return { failed: wanted.length - created, ...(error === undefined ? {} : { error }) };
  }

  private async createPod(job: Job, controllerRef: OwnerReference, index: number | undefined): Promise<void> {
    try {
      const pod = await this.ctx.client.create<Pod>(RESOURCES.pods, podForJob(job, controllerRef, index), job.metadata.namespace);
      this.ctx.recorder.event(job, 'Normal', EVENT_REASON.CREATED, `Created pod: ${pod.metadata.name}`);
    } catch (err) {
      this.ctx.recorder.event(job, 'Warning', EVENT_REASON.CREATE_FAILED, `Error creating: ${errorMessage(err)}`);
      throw err;
    }
  }

  /** Writes the status if it changed and returns the Job as stored; a Job deleted meanwhile is left alone. */
  private async writeStatus(job: Job, status: JobStatus): Promise<Job> {
    if (canonicalJson(job.status ?? {}) === canonicalJson(status)) return job;
    try {
      return await this.ctx.client.updateStatus<Job>(RESOURCES.jobs, { ...{}, ...structuredClone(job), status });
    } catch (err) {
      if (isApiError(err, 'NotFound')) return job;
      throw err;
    }
  }

  private emit(job: Job, events: readonly PlannedEvent[]): void {
    for (const event of events) this.ctx.recorder.event(job, event.type, event.reason, event.message);
  }

  private isJobRef(ref: OwnerReference): boolean {
    return ref.kind === RESOURCES.jobs.kind && ref.apiVersion.startsWith(`${RESOURCES.jobs.group}/`);
  }

  private jobOf(pod: Pod): Job | undefined {
    return resolveControllerRef(this.jobs, RESOURCES.jobs, pod.metadata.namespace, controllerRefOf(pod));
  }

  private checkOrphan(pod: Pod): void {
    if (!hasTrackingFinalizer(pod)) return;
    const job = this.jobOf(pod);
    if (!job || isJobFinished(job) || job.metadata.deletionTimestamp) this.orphans.add(objectKey(pod));
  }

  private podAdded(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) return this.podDeleted(pod, false);
    const job = this.jobOf(pod);
    if (job) {
      this.expectations.creationObserved(objectKey(job));
      this.queue.add(objectKey(job));
    } else if (!controllerRefOf(pod)) for (const candidate of this.jobsSelecting(pod)) this.queue.add(objectKey(candidate));
    this.checkOrphan(pod);
  }

  private podUpdated(oldPod: Pod, pod: Pod): void {
    if (oldPod.metadata.resourceVersion === pod.metadata.resourceVersion) return;
    if (pod.metadata.deletionTimestamp && !oldPod.metadata.deletionTimestamp) this.podDeleted(pod, false);
    const oldJob = this.jobOf(oldPod);
    const job = this.jobOf(pod);
    if (oldJob && oldJob !== job) this.queue.add(objectKey(oldJob));
    if (job) this.queue.add(objectKey(job));
    else if (!controllerRefOf(pod)) for (const candidate of this.jobsSelecting(pod)) this.queue.add(objectKey(candidate));
    this.checkOrphan(pod);
  }

  private podDeleted(pod: Pod, gone = true): void {
    const job = this.jobOf(pod);
    if (!job) return;
    this.expectations.deletionObserved(objectKey(job), objectKey(pod));
    if (gone || pod.metadata.deletionTimestamp) this.queue.add(objectKey(job));
  }

  private jobsSelecting(pod: Pod): Job[] {
    return this.jobs.list(pod.metadata.namespace).filter((job) => {
      const selector = labelSelectorFromObject(job.spec.selector);
      return !selector.empty && selector.matches(pod.metadata.labels ?? {});
    });
  }
}
