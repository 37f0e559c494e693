// autoscaling/v2: horizontal pod autoscalers (served in upstream's preferred version only).
import {
  defineKind,
  pathSegmentErrors,
  RESOURCES,
  type AutoscalingV1HorizontalPodAutoscaler,
  type AutoscalingV1HorizontalPodAutoscalerSpec,
  type CrossVersionObjectReference,
  type HorizontalPodAutoscaler,
  type HorizontalPodAutoscalerBehavior,
  type HorizontalPodAutoscalerCondition,
  type HorizontalPodAutoscalerSpec,
  type HorizontalPodAutoscalerStatus,
  type HPAScalingRules,
  type KubeObject,
  type MetricSpec,
  type MetricStatus,
  type MetricTarget,
  type Quantity,
  type ResourceDefinition,
  type StatusCause,
} from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

/** The CPU utilization an autoscaler without metrics aims for. */
const DEFAULT_CPU_UTILIZATION = 80;
const MAX_PERIOD_SECONDS = 1800;
const MAX_STABILIZATION_SECONDS = 3600;

const SOURCES = { Object: 'object', Pods: 'pods', Resource: 'resource', ContainerResource: 'containerResource', External: 'external' } as const;
type SourceType = keyof typeof SOURCES;

const isSourceType = (type: string): type is SourceType => Object.hasOwn(SOURCES, type);

/** Fills what a behavior section leaves out with the controller's defaults. */
function defaultRules(
  rules: HPAScalingRules | undefined,
  defaults: Required<Pick<HPAScalingRules, 'selectPolicy' | 'policies'>> & HPAScalingRules,
): HPAScalingRules {
  const result = { ...rules };
  if (result.stabilizationWindowSeconds === undefined && defaults.stabilizationWindowSeconds !== undefined)
    result.stabilizationWindowSeconds = defaults.stabilizationWindowSeconds;
  result.selectPolicy ??= defaults.selectPolicy;
  result.policies ??= defaults.policies;
  return result;
}

/** Defaults run before validation, so the spec may still be missing or incomplete. */
function defaultHPA(hpa: { spec?: Partial<HorizontalPodAutoscalerSpec> }): void {
  const spec = (hpa.spec ??= {});
  spec.minReplicas ??= 1;
  if (!spec.metrics?.length)
    spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  if (spec.behavior) {
    spec.behavior.scaleUp = defaultRules(spec.behavior.scaleUp, {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    });
    spec.behavior.scaleDown = defaultRules(spec.behavior.scaleDown, { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });
  }
}

const isPositiveQuantity = (value: Quantity | undefined) => value === undefined || /^\+?0*[1-9]|^\+?0*\.0*[1-9]/.test(String(value));

function validateTarget(target: MetricTarget | undefined, at: string): StatusCause[] {
  const t: Partial<MetricTarget> = target ?? {};
  const causes: StatusCause[] = [];
  if (!t.type) causes.push(fieldErrors.required(`${at}.type`, 'must specify a metric target type'));
  else if (!['Utilization', 'Value', 'AverageValue'].includes(t.type))
    causes.push(fieldErrors.invalid(`${at}.type`, t.type, 'must be either Utilization, Value, or AverageValue'));
  if (!isPositiveQuantity(t.value)) causes.push(fieldErrors.invalid(`${at}.value`, t.value, 'must be positive'));
  if (!isPositiveQuantity(t.averageValue)) causes.push(fieldErrors.invalid(`${at}.averageValue`, t.averageValue, 'must be positive'));
  if (t.averageUtilization !== undefined && t.averageUtilization < 1)
    causes.push(fieldErrors.invalid(`${at}.averageUtilization`, t.averageUtilization, 'must be greater than 0'));
  return causes;
}

function validateMetric(metric: MetricSpec, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const given = Object.values(SOURCES).filter((field) => metric[field] !== undefined);
  const expected = metric.type && isSourceType(metric.type) ? SOURCES[metric.type] : undefined;
  if (!metric.type) causes.push(fieldErrors.required(`${at}.type`, 'must specify a metric source type'));
  else if (!expected) causes.push(fieldErrors.notSupported(`${at}.type`, metric.type, ['ContainerResource', 'External', 'Object', 'Pods', 'Resource']));
  if (given.length !== 1) causes.push(fieldErrors.forbidden(at, 'must populate the given metric source only'));
  if (!expected) return causes;
  const source = metric[expected];
  if (!source) return [...causes, fieldErrors.required(`${at}.${expected}`, 'must populate information for the given metric source')];
  const sourceAt = `${at}.${expected}`;
  if (expected === 'pods' || expected === 'external' || expected === 'object') {
    const name = metric[expected]?.metric?.name;
    if (!name) causes.push(fieldErrors.required(`${sourceAt}.metric.name`, 'must specify a metric name'));
  }
  if (expected === 'resource' || expected === 'containerResource') {
    if (!metric[expected]?.name) causes.push(fieldErrors.required(`${sourceAt}.name`, 'must specify a resource name'));
    if (expected === 'containerResource' && !metric.containerResource?.container)
      causes.push(fieldErrors.required(`${sourceAt}.container`, 'must specify a container'));
  }
  if (expected === 'object') causes.push(...validateReference(metric.object?.describedObject ?? {}, `${sourceAt}.describedObject`));
  causes.push(...validateTarget(source.target, `${sourceAt}.target`));
  return causes;
}

function validateReference(ref: Partial<CrossVersionObjectReference>, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const field of ['kind', 'name'] as const) {
    const value = ref[field] ?? '';
    if (!value) causes.push(fieldErrors.required(`${at}.${field}`));
    else causes.push(...pathSegmentErrors(value).map((message) => fieldErrors.invalid(`${at}.${field}`, value, message)));
  }
  return causes;
}

function validateRules(rules: HPAScalingRules | undefined, at: string): StatusCause[] {
  if (!rules) return [];
  const causes: StatusCause[] = [];
  const window = rules.stabilizationWindowSeconds;
  if (window !== undefined && (window < 0 || window > MAX_STABILIZATION_SECONDS))
    causes.push(fieldErrors.invalid(`${at}.stabilizationWindowSeconds`, window, `must be less than or equal to ${MAX_STABILIZATION_SECONDS}`));
  if (rules.selectPolicy !== undefined && !['Max', 'Min', 'Disabled'].includes(rules.selectPolicy))
    causes.push(fieldErrors.notSupported(`${at}.selectPolicy`, rules.selectPolicy, ['Disabled', 'Max', 'Min']));
  const policies = rules.policies ?? [];
  if (policies.length === 0 && rules.selectPolicy !== 'Disabled') causes.push(fieldErrors.required(`${at}.policies`, 'must specify at least one Policy'));
  policies.forEach((policy, i) => {
    const policyAt = `${at}.policies[${i}]`;
    if (policy.type !== 'Pods' && policy.type !== 'Percent') causes.push(fieldErrors.notSupported(`${policyAt}.type`, policy.type ?? '', ['Percent', 'Pods']));
    if ((policy.value ?? 0) <= 0) causes.push(fieldErrors.invalid(`${policyAt}.value`, policy.value ?? 0, 'must be greater than zero'));
    const period = policy.periodSeconds ?? 0;
    if (period <= 0) causes.push(fieldErrors.invalid(`${policyAt}.periodSeconds`, period, 'must be greater than zero'));
    else if (period > MAX_PERIOD_SECONDS)
      causes.push(fieldErrors.invalid(`${policyAt}.periodSeconds`, period, `must be less than or equal to ${MAX_PERIOD_SECONDS}`));
  });
  return causes;
}

function validateHPA(hpa: HorizontalPodAutoscaler): StatusCause[] {
  const spec: Partial<HorizontalPodAutoscalerSpec> = hpa.spec ?? {};
  const causes: StatusCause[] = [];
  if (spec.minReplicas !== undefined && spec.minReplicas < 1)
    causes.push(fieldErrors.invalid('spec.minReplicas', spec.minReplicas, 'must be greater than or equal to 1'));
  const max = spec.maxReplicas ?? 0;
  if (spec.maxReplicas !== undefined && max < 1) causes.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (spec.minReplicas !== undefined && spec.maxReplicas !== undefined && max < spec.minReplicas)
    causes.push(fieldErrors.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  // As upstream, later sections are only checked once the earlier ones are valid.
  const reference = validateReference(spec.scaleTargetRef ?? {}, 'spec.scaleTargetRef');
  if (reference.length > 0) return [...causes, ...reference];
  const metrics = (spec.metrics ?? []).flatMap((metric, i) => validateMetric(metric, `spec.metrics[${i}]`));
  if (metrics.length > 0) return [...causes, ...metrics];
  return [...causes, ...validateRules(spec.behavior?.scaleUp, 'spec.behavior.scaleUp'), ...validateRules(spec.behavior?.scaleDown, 'spec.behavior.scaleDown')];
}

/** kubectl's Targets cell: "cpu: 40%/80%", "<unknown>" for metrics not yet measured, two metrics then a count. */
function formatMetrics(specs: MetricSpec[] | undefined, statuses: MetricStatus[] | undefined): string {
  if (!specs?.length) return '<none>';
  const cells = specs.map((spec, i) => {
    const status = statuses?.[i];
    switch (spec.type) {
      case 'External':
      case 'Object': {
        const source = spec.type === 'External' ? spec.external : spec.object;
        const current = spec.type === 'External' ? status?.external?.current : status?.object?.current;
        if (source?.target?.averageValue !== undefined) return `${current?.averageValue ?? '<unknown>'}/${source.target.averageValue} (avg)`;
        return `${current?.value ?? '<unknown>'}/${source?.target?.value ?? ''}`;
      }
      case 'Pods':
        return `${status?.pods?.current?.averageValue ?? '<unknown>'}/${spec.pods?.target?.averageValue ?? ''}`;
      case 'Resource':
      case 'ContainerResource': {
        const source = spec.type === 'Resource' ? spec.resource : spec.containerResource;
        const current = spec.type === 'Resource' ? status?.resource?.current : status?.containerResource?.current;
        const name = source?.name ?? '';
        if (source?.target?.averageValue !== undefined) return `${name}: ${current?.averageValue ?? '<unknown>'}/${source.target.averageValue}`;
        const now = current?.averageUtilization !== undefined ? `${current.averageUtilization}%` : '<unknown>';
        const target = source?.target?.averageUtilization !== undefined ? `${source.target.averageUtilization}%` : '<auto>';
        return `${name}: ${now}/${target}`;
      }
      default:
        return '<unknown type>';
    }
  });
  return cells.length > 2 ? `${cells.slice(0, 2).join(', ')} + ${cells.length - 2} more...` : cells.join(', ');
}

/** What both served versions of the autoscalers share. */
const HPA_NAMES = { ...{}, ...RESOURCES.horizontalpodautoscalers, subresources: ['status'] };

export const horizontalPodAutoscalers = defineKind<HorizontalPodAutoscaler>({
  ...{},
  ...HPA_NAMES,
  columns: [
    computed('Reference', (hpa) => `${hpa.spec?.scaleTargetRef?.kind ?? ''}/${hpa.spec?.scaleTargetRef?.name ?? ''}`),
    computed('Targets', (hpa) => formatMetrics(hpa.spec?.metrics, hpa.status?.currentMetrics)),
    computed('MinPods', (hpa) => (hpa.spec?.minReplicas !== undefined ? String(hpa.spec.minReplicas) : '<unset>')),
    computed('MaxPods', (hpa) => hpa.spec?.maxReplicas ?? 0),
    computed('Replicas', (hpa) => hpa.status?.currentReplicas ?? 0),
    AGE_COLUMN,
  ],
  strategy: { defaults: defaultHPA, validate: validateHPA },
});

// ---- autoscaling/v1: the same autoscalers, as v1 shows them ------------------------------------------------

/** Where v1 keeps what its fields cannot say, as upstream does. */
const ANNOTATIONS = {
  metrics: 'autoscaling.alpha.kubernetes.io/metrics',
  currentMetrics: 'autoscaling.alpha.kubernetes.io/current-metrics',
  behavior: 'autoscaling.alpha.kubernetes.io/behavior',
  conditions: 'autoscaling.alpha.kubernetes.io/conditions',
} as const;

/** What the annotations hold: the v2 fields hpaToV1 wrote there. */
interface AnnotatedFields {
  metrics: MetricSpec[];
  currentMetrics: MetricStatus[];
  behavior: HorizontalPodAutoscalerBehavior;
  conditions: HorizontalPodAutoscalerCondition[];
}

const isCpuUtilization = (metric: MetricSpec) =>
  metric.type === 'Resource' && metric.resource?.name === 'cpu' && metric.resource.target?.type === 'Utilization';

/** Takes a field's annotation out of `annotations`; undefined when it is absent or not JSON. */
function takeAnnotation<F extends keyof AnnotatedFields>(annotations: Record<string, string>, field: F): AnnotatedFields[F] | undefined {
  const key = ANNOTATIONS[field];
  const text = annotations[key];
  delete annotations[key];
  if (text === undefined) return undefined;
  try {
    // Trusted as the v2 field it was written from.
    return JSON.parse(text) as AnnotatedFields[F];
  } catch {
    return undefined;
  }
}

/**
 * v2 → v1: the CPU utilization target and current value in v1's fields; what v1 cannot say (other metrics,
 * behavior, conditions) in annotations, as upstream keeps it, so a v1 round trip loses nothing.
 */
function hpaToV1(hpa: HorizontalPodAutoscaler): KubeObject {
  const spec: Partial<HorizontalPodAutoscalerSpec> = hpa.spec ?? {};
  const metrics = spec.metrics ?? [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((metric) => metric !== cpu);
  const status: Partial<HorizontalPodAutoscalerStatus> = hpa.status ?? {};
  const currentCpu = status.currentMetrics?.find((metric) => metric.type === 'Resource' && metric.resource?.name === 'cpu');
  const annotations: Record<string, string> = { ...hpa.metadata.annotations };
  if (others.length) annotations[ANNOTATIONS.metrics] = JSON.stringify(others);
  if (spec.behavior) annotations[ANNOTATIONS.behavior] = JSON.stringify(spec.behavior);
  const currentOthers = (status.currentMetrics ?? []).filter((metric) => metric !== currentCpu);
  if (currentOthers.length) annotations[ANNOTATIONS.currentMetrics] = JSON.stringify(currentOthers);
  if (status.conditions?.length) annotations[ANNOTATIONS.conditions] = JSON.stringify(status.conditions);
  const { currentMetrics: _current, conditions: _conditions, ...restStatus } = status;
  const currentUtilization = currentCpu?.resource?.current?.averageUtilization;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { ...{}, ...hpa.metadata, ...(Object.keys(annotations).length ? { annotations } : {}) },
    spec: {
      ...{},
      ...(spec.scaleTargetRef ? { scaleTargetRef: spec.scaleTargetRef } : {}),
      ...(spec.minReplicas !== undefined ? { minReplicas: spec.minReplicas } : {}),
      ...(spec.maxReplicas !== undefined ? { maxReplicas: spec.maxReplicas } : {}),
      ...(cpu?.resource?.target?.averageUtilization !== undefined ? { targetCPUUtilizationPercentage: cpu.resource.target.averageUtilization } : {}),
    },
    status: { ...{}, ...restStatus, ...(currentUtilization !== undefined ? { currentCPUUtilizationPercentage: currentUtilization } : {}) },
  };
}

/** v1 → v2: the reverse, taking back what the annotations hold. */
function hpaFromV1(v1: AutoscalingV1HorizontalPodAutoscaler): KubeObject {
  const annotations: Record<string, string> = { ...v1.metadata.annotations };
  const others = takeAnnotation(annotations, 'metrics') ?? [];
  const behavior = takeAnnotation(annotations, 'behavior');
  const currentOthers = takeAnnotation(annotations, 'currentMetrics') ?? [];
  const conditions = takeAnnotation(annotations, 'conditions');
  const v1Spec: Partial<AutoscalingV1HorizontalPodAutoscalerSpec> = v1.spec ?? {};
  const { targetCPUUtilizationPercentage: target, ...spec } = v1Spec;
  const { currentCPUUtilizationPercentage: current, ...status } = v1.status ?? {};
  const metrics: MetricSpec[] = [
    ...(target !== undefined ? [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } }] : []),
    ...others,
  ];
  const currentMetrics: MetricStatus[] = [
    ...(current !== undefined ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: current } } }] : []),
    ...currentOthers,
  ];
  const metadata = { ...v1.metadata };
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: { ...{}, ...spec, ...(metrics.length ? { metrics } : {}), ...(behavior ? { behavior } : {}) },
    ...(v1.status !== undefined
      ? { status: { ...{}, ...status, ...(currentMetrics.length ? { currentMetrics } : {}), ...(conditions ? { conditions } : {}) } }
      : {}),
  };
}

/** autoscaling/v1, served from the stored v2 autoscalers (kubectl before 1.2x's `autoscale` writes v1). */
export const horizontalPodAutoscalersV1 = defineKind<AutoscalingV1HorizontalPodAutoscaler>({
  ...{},
  ...HPA_NAMES,
  version: 'v1',
  conversion: { toStorage: hpaFromV1, fromStorage: hpaToV1 },
});

export const AUTOSCALING_KINDS: ResourceDefinition[] = [horizontalPodAutoscalers, horizontalPodAutoscalersV1];
