import { isApiError, RESOURCES, type Job } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { conditionOf, isJobFinished } from './job-sync.js';
import { JOB_CONDITION, TTL_CONTROLLER_NAME } from './names.js';

/** When a finished Job with `ttlSecondsAfterFinished` may be deleted (ms since the epoch), if it may at all. */
export function expiresAt(job: Job): number | undefined {
  const ttl = job.spec.ttlSecondsAfterFinished;
  if (ttl === undefined || job.metadata.deletionTimestamp || !isJobFinished(job)) return undefined;
  const terminal = conditionOf(job.status, JOB_CONDITION.COMPLETE)?.status === 'True' ? JOB_CONDITION.COMPLETE : JOB_CONDITION.FAILED;
  const finished = job.status?.completionTime ?? conditionOf(job.status, terminal)?.lastTransitionTime;
  if (!finished) return undefined;
  return Date.parse(finished) + ttl * 1000;
}

/**
 * The ttl-after-finished controller: deletes a finished Job (in the foreground, so its pods go first)
 * `ttlSecondsAfterFinished` after it completed or failed.
 */
export class TtlAfterFinishedController {
  private readonly queue = new WorkQueue<string>({ name: TTL_CONTROLLER_NAME });
  private readonly jobs: Informer<Job>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly now: () => number = Date.now,
  ) {
    this.jobs = ctx.informers.informer<Job>(RESOURCES.jobs);
    const consider = (job: Job) => {
      if (expiresAt(job) !== undefined) this.queue.add(objectKey(job));
    };
    this.jobs.addHandlers({ add: consider, update: (_old, job) => consider(job) });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.jobs], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  async sync(key: string): Promise<void> {
    const cached = this.jobs.get(key);
    const cachedExpiry = cached && expiresAt(cached);
    if (!cached || cachedExpiry === undefined) return;
    if (cachedExpiry > this.now()) return this.queue.addAfter(key, cachedExpiry - this.now());
    // The TTL may have changed since the cache saw the Job: decide on the live object.
    let live: Job;
    try {
      live = await this.ctx.client.get<Job>(RESOURCES.jobs, cached.metadata.name!, cached.metadata.namespace);
    } catch (err) {
      if (isApiError(err, 'NotFound')) return;
      throw err;
    }
    const liveExpiry = expiresAt(live);
    if (liveExpiry === undefined) return;
    if (liveExpiry > this.now()) return this.queue.addAfter(key, liveExpiry - this.now());
    try {
      await this.ctx.client.delete(RESOURCES.jobs, live.metadata.name!, live.metadata.namespace, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: live.metadata.uid!, resourceVersion: live.metadata.resourceVersion! },
      });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }
}
