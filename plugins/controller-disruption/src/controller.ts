import { errorMessage, isApiError, labelSelectorFromObject, RESOURCES, type Pod, type PodCondition, type PodDisruptionBudget } from '@skiff/api';
import { objectKey, WorkQueue } from '@skiff/client';
import { kubeTime, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, Informer } from '@skiff/kernel';
import { budgetTargets, countHealthy, failedStatus, needsScale, nextStatus, pendingDisruptions, staleDisruptionDelay } from './budget.js';
import { CONTROLLER_NAME, DISRUPTION_TARGET, EVENT_REASON } from './names.js';
import { ControllerScales } from './scale.js';

/**
 * Keeps the status of every PodDisruptionBudget — `currentHealthy`, `desiredHealthy`, `expectedPods`,
 * `disruptionsAllowed`, `disruptedPods`, `observedGeneration` and the `DisruptionAllowed` condition — in
 * line with the pods its selector matches, which the eviction subresource then reads. Work is queued per
 * budget on any change of the budget or of a pod it selects (or selected). A second queue sets stale
 * `DisruptionTarget` pod conditions to False.
 */
export class DisruptionController {
  private readonly queue = new WorkQueue<string>({ name: CONTROLLER_NAME });
  private readonly staleQueue = new WorkQueue<string>({ name: `${CONTROLLER_NAME}-stale-pod-disruption` });
  private readonly budgets: Informer<PodDisruptionBudget>;
  private readonly pods: Informer<Pod>;
  private readonly scales: ControllerScales;

  constructor(private readonly ctx: ControllerContext) {
    this.budgets = ctx.informers.informer<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.scales = new ControllerScales(ctx);

    const enqueue = (pdb: PodDisruptionBudget) => this.queue.add(objectKey(pdb));
    this.budgets.addHandlers({ add: enqueue, update: (_old, pdb) => enqueue(pdb), delete: enqueue });
    this.pods.addHandlers({
      add: (pod) => this.podChanged(undefined, pod),
      update: (oldPod, pod) => this.podChanged(oldPod, pod),
      delete: (pod) => this.podChanged(undefined, pod),
    });
  }

  /** Waits for the caches, then syncs budgets (and stale pod conditions) until the signal aborts. */
  async run(workers: number): Promise<void> {
    await Promise.all([
      runWhenSynced(this.ctx, {
        informers: [this.budgets, this.pods, ...this.scales.informers],
        queue: this.queue,
        workers,
        sync: (key) => this.sync(key),
      }),
      runWhenSynced(this.ctx, { informers: [this.pods], queue: this.staleQueue, workers: 1, sync: (key) => this.syncStalePod(key) }),
    ]);
  }

  /** Brings the status of one budget (`namespace/name`) in line with its pods. */
  async sync(key: string): Promise<void> {
    const pdb = this.budgets.get(key);
    if (!pdb) return;
    try {
      await this.trySync(pdb);
    } catch (err) {
      // A conflict only means the cache was behind: the retry reads the newer budget.
      if (isApiError(err, 'Conflict')) throw err;
      await this.failSafe(pdb, err);
      throw err;
    }
  }

  private async trySync(pdb: PodDisruptionBudget): Promise<void> {
    const { recorder } = this.ctx;
    const namespace = pdb.metadata.namespace!;
    let pods: Pod[];
    try {
      const selector = labelSelectorFromObject(pdb.spec?.selector);
      pods = this.pods.list(namespace).filter((pod) => selector.matches(pod.metadata.labels));
    } catch (err) {
      recorder.event(pdb, 'Warning', EVENT_REASON.NO_PODS, `Failed to get pods: ${errorMessage(err)}`);
      throw err;
    }
    if (pods.length === 0) recorder.event(pdb, 'Normal', EVENT_REASON.NO_PODS, 'No matching pods found');

    let targets;
    try {
      const scale = needsScale(pdb.spec) ? await this.scales.expectedScale(pods, namespace) : undefined;
      if (scale && scale.unmanaged.length > 0) {
        recorder.event(
          pdb,
          'Warning',
          EVENT_REASON.UNMANAGED_PODS,
          `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector ?? null)}) have no controller, so its status ` +
            `cannot be computed correctly (${scale.unmanaged.join(', ')}). Set .spec.minAvailable to an integer to count them.`,
        );
      }
      targets = budgetTargets(pdb.spec, pods.length, scale?.expected ?? 0);
    } catch (err) {
      recorder.event(pdb, 'Warning', EVENT_REASON.CALCULATE_EXPECTED_POD_COUNT_FAILED, `Failed to calculate the number of expected pods: ${errorMessage(err)}`);
      throw err;
    }

    const now = Date.now();
    const disruptions = pendingDisruptions(pods, pdb.status?.disruptedPods, now);
    for (const pod of disruptions.notDeleted) {
      recorder.event(pod, 'Warning', EVENT_REASON.NOT_DELETED, `Pod was expected by PDB ${namespace}/${pdb.metadata.name} to be deleted but it wasn't`);
    }
    const status = nextStatus(
      pdb,
      { ...{}, ...targets, currentHealthy: countHealthy(pods, disruptions.disruptedPods, now), disruptedPods: disruptions.disruptedPods },
      now,
    );
    if (status) await this.ctx.client.updateStatus<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, { ...{}, ...pdb, status });
    if (disruptions.recheckAt !== undefined) this.queue.addAfter(objectKey(pdb), disruptions.recheckAt - now);
  }

  /** After a failed sync, at least make sure the eviction subresource lets nothing through. */
  private async failSafe(pdb: PodDisruptionBudget, err: unknown): Promise<void> {
    const status = failedStatus(pdb, errorMessage(err), Date.now());
    if (!status) return;
    try {
      await this.ctx.client.updateStatus<PodDisruptionBudget>(RESOURCES.poddisruptionbudgets, { ...{}, ...pdb, status });
    } catch (writeErr) {
      this.ctx.logger.warn({ err: writeErr, pdb: objectKey(pdb) }, 'could not mark the disruption budget as failed');
    }
  }

  /** Sets a pod's stale `DisruptionTarget` condition to False (see {@link staleDisruptionDelay}). */
  async syncStalePod(key: string): Promise<void> {
    const pod = this.pods.get(key);
    if (!pod) return;
    const delay = staleDisruptionDelay(pod, Date.now());
    if (delay === undefined) return;
    if (delay > 0) {
      this.staleQueue.addAfter(key, delay);
      return;
    }
    const reset: PodCondition = { type: DISRUPTION_TARGET, status: 'False', lastTransitionTime: kubeTime(Date.now()) };
    const conditions = (pod.status?.conditions ?? []).map((condition) => (condition.type === DISRUPTION_TARGET ? reset : condition));
    await this.ctx.client.updateStatus<Pod>(RESOURCES.pods, { ...{}, ...pod, status: { ...{}, ...pod.status, conditions } });
    this.ctx.logger.info({ pod: key }, 'set a stale DisruptionTarget condition to False');
  }

  private podChanged(oldPod: Pod | undefined, pod: Pod): void {
    const keys = new Set<string>();
    // A pod whose labels changed may have left one budget and joined another: both need a look.
    for (const labels of oldPod ? [oldPod.metadata.labels, pod.metadata.labels] : [pod.metadata.labels]) {
      for (const pdb of this.budgetsFor(pod.metadata.namespace!, labels)) keys.add(objectKey(pdb));
    }
    for (const key of keys) this.queue.add(key);
    const delay = staleDisruptionDelay(pod, Date.now());
    if (delay !== undefined) this.staleQueue.addAfter(objectKey(pod), delay);
  }

  private budgetsFor(namespace: string, labels: Record<string, string> | undefined): PodDisruptionBudget[] {
    return this.budgets.list(namespace).filter((pdb) => {
      try {
        return labelSelectorFromObject(pdb.spec?.selector).matches(labels);
      } catch {
        return false;
      }
    });
  }
}
