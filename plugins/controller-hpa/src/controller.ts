import {
  errorMessage,
  isApiError,
  parseLabelSelector,
  parseQuantity,
  RESOURCES,
  type HorizontalPodAutoscaler,
  type HorizontalPodAutoscalerCondition,
  type HorizontalPodAutoscalerStatus,
  type LabelSelectorMatcher,
  type MetricStatus,
  type Pod,
  type ResourceType,
  type Scale,
} from '@skiff/api';
import { EventRecorderImpl, objectKey, WorkQueue } from '@skiff/client';
import { canonicalJson, kubeTime, runWhenSynced } from '@skiff/controller-manager';
import type { ControllerContext, EventRecorder, Informer } from '@skiff/kernel';
import { setCondition } from './conditions.js';
import { ApiPodMetricsSource, type PodMetricsSource, type PodUsage } from './metrics-source.js';
import { replicasForMetric } from './metric-replicas.js';
import { CONDITION, EVENT_COMPONENT, EVENT_REASON, FAILED_METRIC_REASON, HPA_CONTROLLER_NAME } from './names.js';
import { emptyHistory, normalizeReplicas, recordRescale, type ScaleHistory } from './normalize.js';
import type { ReplicaSettings, Tolerances } from './replicas.js';
import { resolveScaleTarget } from './targets.js';

export interface HpaControllerSettings {
  syncPeriodMs: number;
  tolerance: number;
  downscaleStabilizationMs: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
  /** Where pod usage comes from; default: the metrics.k8s.io API through the controller's client. */
  metrics?: PodMetricsSource;
  now?: () => number;
}

/** What the metrics said, before stabilization and limits. */
interface MetricsOutcome {
  statuses: MetricStatus[];
  replicas?: number;
  metricName?: string;
  /** Set when no replica count can be trusted: all metrics failed, or some failed and the rest ask for fewer. */
  error?: string;
}

/**
 * The HorizontalPodAutoscaler controller (autoscaling/v2): every sync period, for each autoscaler, reads its
 * target's `/scale`, its pods and their usage, computes the replica count each metric asks for, keeps the
 * highest, stabilizes it over recent recommendations, limits it by the scaling policies and min/max, writes
 * it to the target's `/scale`, and reports status, conditions and events as upstream does.
 */
export class HpaController {
  private readonly queue = new WorkQueue<string>({ name: HPA_CONTROLLER_NAME });
  private readonly hpas: Informer<HorizontalPodAutoscaler>;
  private readonly pods: Informer<Pod>;
  private readonly metrics: PodMetricsSource;
  private readonly recorder: EventRecorder;
  private readonly now: () => number;
  /** Recommendations and rescales per autoscaler (by uid), for the stabilization windows and policies. */
  private readonly histories = new Map<string, ScaleHistory>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly settings: HpaControllerSettings,
  ) {
    this.now = settings.now ?? Date.now;
    this.metrics = settings.metrics ?? new ApiPodMetricsSource(ctx.client);
    this.recorder = new EventRecorderImpl(ctx.client, { component: EVENT_COMPONENT, logger: ctx.logger });
    this.hpas = ctx.informers.informer<HorizontalPodAutoscaler>(RESOURCES.horizontalpodautoscalers);
    this.pods = ctx.informers.informer<Pod>(RESOURCES.pods);
    this.hpas.addHandlers({
      add: (hpa) => this.queue.add(objectKey(hpa)),
      // Its own status writes come back as updates: only a changed spec is worth a sync before the next period.
      update: (old, hpa) => {
        if (canonicalJson(old.spec) !== canonicalJson(hpa.spec)) this.queue.add(objectKey(hpa));
      },
      delete: (hpa) => this.histories.delete(hpa.metadata.uid!),
    });
  }

  run(workers: number): Promise<void> {
    return runWhenSynced(this.ctx, { informers: [this.hpas, this.pods], queue: this.queue, workers, sync: (key) => this.sync(key) });
  }

  async sync(key: string): Promise<void> {
    const hpa = this.hpas.get(key);
    if (!hpa) return;
    try {
      await this.reconcile(hpa);
    } finally {
      this.queue.addAfter(key, this.settings.syncPeriodMs);
    }
  }

  private history(hpa: HorizontalPodAutoscaler): ScaleHistory {
    let history = this.histories.get(hpa.metadata.uid!);
    if (!history) this.histories.set(hpa.metadata.uid!, (history = emptyHistory()));
    return history;
  }

  private async reconcile(hpa: HorizontalPodAutoscaler): Promise<void> {
    const now = this.now();
    const namespace = hpa.metadata.namespace!;
    const ref = hpa.spec.scaleTargetRef;
    const status: HorizontalPodAutoscalerStatus = structuredClone(hpa.status ?? { desiredReplicas: 0 });
    let conditions: HorizontalPodAutoscalerCondition[] = status.conditions ?? [];
    const condition = (type: string, value: boolean, reason: string, message: string) => {
      conditions = setCondition(conditions, type, value, reason, message, now);
    };
    const finish = (fields: Partial<HorizontalPodAutoscalerStatus>) => this.writeStatus(hpa, { ...{}, ...status, ...fields, conditions });

    let scale: Scale;
    let type: ResourceType;
    try {
      type = await resolveScaleTarget(this.ctx.client, ref);
      scale = await this.ctx.client.get<Scale>(type, ref.name, namespace, { subresource: 'scale' });
    } catch (err) {
      const message = errorMessage(err);
      this.recorder.event(hpa, 'Warning', EVENT_REASON.FAILED_GET_SCALE, message);
      condition(CONDITION.ABLE_TO_SCALE, false, 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${message}`);
      return finish({});
    }
    condition(CONDITION.ABLE_TO_SCALE, true, 'SucceededGetScale', "the HPA controller was able to get the target's current scale");

    const currentReplicas = scale.spec?.replicas ?? 0;
    const minReplicas = hpa.spec.minReplicas ?? 1;
    const maxReplicas = hpa.spec.maxReplicas;
    let desiredReplicas = 0;
    let reason = '';
    let rescale = true;
    let metricStatuses: MetricStatus[] = [];
    if (currentReplicas === 0 && minReplicas !== 0) {
      desiredReplicas = 0;
      rescale = false;
      condition(CONDITION.SCALING_ACTIVE, false, 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
    } else if (currentReplicas > maxReplicas) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desiredReplicas = maxReplicas;
    } else if (currentReplicas < minReplicas) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desiredReplicas = minReplicas;
    } else {
      const outcome = await this.replicasForMetrics(hpa, scale, currentReplicas, now, condition);
      metricStatuses = outcome.statuses;
      if (outcome.error !== undefined || outcome.replicas === undefined) {
        this.recorder.event(hpa, 'Warning', EVENT_REASON.FAILED_COMPUTE_METRICS_REPLICAS, outcome.error ?? 'no metrics');
        return finish({ currentReplicas, ...metricsField(metricStatuses) });
      }
      let rescaleMetric = '';
      if (outcome.replicas > desiredReplicas) {
        desiredReplicas = outcome.replicas;
        rescaleMetric = outcome.metricName ?? '';
      }
      if (desiredReplicas > currentReplicas) reason = `${rescaleMetric} above target`;
      if (desiredReplicas < currentReplicas) reason = 'All metrics below target';
      const normalized = normalizeReplicas(
        {
          currentReplicas,
          desiredReplicas,
          minReplicas,
          maxReplicas,
          ...(hpa.spec.behavior ? { behavior: hpa.spec.behavior } : {}),
          downscaleStabilizationMs: this.settings.downscaleStabilizationMs,
          now,
        },
        this.history(hpa),
      );
      condition(CONDITION.ABLE_TO_SCALE, true, normalized.ableToScale.reason, normalized.ableToScale.message);
      condition(CONDITION.SCALING_LIMITED, normalized.scalingLimited.limited, normalized.scalingLimited.reason, normalized.scalingLimited.message);
      desiredReplicas = normalized.replicas;
      rescale = desiredReplicas !== currentReplicas;
    }

    let lastScaleTime = status.lastScaleTime;
    if (rescale) {
      try {
        await this.ctx.client.update<Scale>(type, { ...{}, ...scale, spec: { ...{}, ...scale.spec, replicas: desiredReplicas } }, { subresource: 'scale' });
      } catch (err) {
        const message = errorMessage(err);
        this.recorder.event(hpa, 'Warning', EVENT_REASON.FAILED_RESCALE, `New size: ${desiredReplicas}; reason: ${reason}; error: ${message}`);
        condition(CONDITION.ABLE_TO_SCALE, false, 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${message}`);
        return finish({ currentReplicas, ...metricsField(metricStatuses) });
      }
      condition(CONDITION.ABLE_TO_SCALE, true, 'SucceededRescale', `the HPA controller was able to update the target scale to ${desiredReplicas}`);
      this.recorder.event(hpa, 'Normal', EVENT_REASON.SUCCESSFUL_RESCALE, `New size: ${desiredReplicas}; reason: ${reason}`);
      this.ctx.logger.info({ hpa: objectKey(hpa), from: currentReplicas, to: desiredReplicas, reason }, 'rescaled');
      if (hpa.spec.behavior) recordRescale(this.history(hpa), currentReplicas, desiredReplicas, now);
      lastScaleTime = kubeTime(now);
    } else {
      desiredReplicas = currentReplicas;
    }
    return finish({ currentReplicas, desiredReplicas, ...metricsField(metricStatuses), ...(lastScaleTime ? { lastScaleTime } : {}) });
  }

  /** Every metric's proposal; the highest wins. Sets ScalingActive. */
  private async replicasForMetrics(
    hpa: HorizontalPodAutoscaler,
    scale: Scale,
    currentReplicas: number,
    now: number,
    condition: (type: string, value: boolean, reason: string, message: string) => void,
  ): Promise<MetricsOutcome> {
    const namespace = hpa.metadata.namespace!;
    const selectorText = scale.status?.selector ?? '';
    if (!selectorText) {
      this.recorder.event(hpa, 'Warning', EVENT_REASON.SELECTOR_REQUIRED, 'selector is required');
      condition(CONDITION.SCALING_ACTIVE, false, 'InvalidSelector', "the HPA target's scale is missing a selector");
      return { statuses: [], error: 'selector is required' };
    }
    let selector: LabelSelectorMatcher;
    try {
      selector = parseLabelSelector(selectorText);
    } catch (err) {
      const message = errorMessage(err);
      this.recorder.event(hpa, 'Warning', EVENT_REASON.INVALID_SELECTOR, message);
      condition(CONDITION.SCALING_ACTIVE, false, 'InvalidSelector', `couldn't convert selector into a corresponding internal selector object: ${message}`);
      return { statuses: [], error: message };
    }
    const pods = this.pods.list(namespace).filter((pod) => selector.matches(pod.metadata.labels));
    let usage: Promise<readonly PodUsage[]> | undefined;
    const input = { pods, currentReplicas, usage: () => (usage ??= this.metrics.podMetrics(namespace, selectorText)) };
    const settings = this.replicaSettings(hpa, now);

    const specs = hpa.spec.metrics ?? [];
    const statuses: MetricStatus[] = specs.map(() => ({ type: '' }));
    let replicas: number | undefined;
    let metricName: string | undefined;
    let invalid = 0;
    let firstFailure: { reason: string; message: string } | undefined;
    for (const [i, spec] of specs.entries()) {
      try {
        const proposal = await replicasForMetric(spec, input, settings);
        statuses[i] = proposal.status;
        if (replicas === undefined || proposal.replicas > replicas) {
          replicas = proposal.replicas;
          metricName = proposal.name;
        }
      } catch (err) {
        const reason = FAILED_METRIC_REASON[spec.type] ?? FAILED_METRIC_REASON.Resource!;
        const message = errorMessage(err);
        this.recorder.event(hpa, 'Warning', reason, message);
        firstFailure ??= { reason, message };
        invalid += 1;
      }
    }
    if (firstFailure && (invalid >= specs.length || replicas === undefined || replicas < currentReplicas)) {
      condition(CONDITION.SCALING_ACTIVE, false, firstFailure.reason, `the HPA was unable to compute the replica count: ${firstFailure.message}`);
      return { statuses, error: `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstFailure.message}` };
    }
    condition(CONDITION.SCALING_ACTIVE, true, 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metricName}`);
    return { statuses, ...(replicas !== undefined ? { replicas } : {}), ...(metricName ? { metricName } : {}) };
  }

  private replicaSettings(hpa: HorizontalPodAutoscaler, now: number): ReplicaSettings {
    return {
      tolerances: this.tolerances(hpa),
      cpuInitializationPeriodMs: this.settings.cpuInitializationPeriodMs,
      initialReadinessDelayMs: this.settings.initialReadinessDelayMs,
      now,
    };
  }

  /** The controller's tolerance, unless the autoscaler's behavior sets one for a direction. */
  private tolerances(hpa: HorizontalPodAutoscaler): Tolerances {
    const own = (value: string | number | undefined) => (value === undefined ? this.settings.tolerance : parseQuantity(value));
    return { scaleUp: own(hpa.spec.behavior?.scaleUp?.tolerance), scaleDown: own(hpa.spec.behavior?.scaleDown?.tolerance) };
  }

  private async writeStatus(hpa: HorizontalPodAutoscaler, status: HorizontalPodAutoscalerStatus): Promise<void> {
    for (const key of Object.keys(status) as (keyof HorizontalPodAutoscalerStatus)[]) if (status[key] === undefined) delete status[key];
    if (!status.conditions?.length) delete status.conditions;
    if (canonicalJson(hpa.status ?? {}) === canonicalJson(status)) return;
    try {
      await this.ctx.client.updateStatus<HorizontalPodAutoscaler>(RESOURCES.horizontalpodautoscalers, { ...{}, ...structuredClone(hpa), status });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }
}

/** `currentMetrics` as status carries it: left out (and an older value dropped) when there is none. */
function metricsField(statuses: MetricStatus[]): Pick<HorizontalPodAutoscalerStatus, 'currentMetrics'> {
  return { currentMetrics: statuses.length ? statuses : undefined };
}
