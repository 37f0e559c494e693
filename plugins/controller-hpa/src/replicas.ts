// The pure part of the autoscaler: from pods, their usage and a metric's target, the replica count the
// metric asks for — upstream's documented algorithm with its refinements for pods without metrics, pods not
// yet ready and pods on their way out.
import { parseCpuMillis, type Pod } from '@skiff/api';
import { HpaError } from './errors.js';
import type { PodUsage } from './metrics-source.js';

/** One pod's usage of one resource, in milli-units, and the sample it comes from. */
export interface PodSample {
  value: number;
  timestamp: number;
  windowMs: number;
}

/** How far the usage ratio may stray from 1 before the autoscaler acts, each way. */
export interface Tolerances {
  scaleUp: number;
  scaleDown: number;
}

export interface ReplicaSettings {
  tolerances: Tolerances;
  /** Within this long of a pod's start, a CPU sample counts only once taken wholly after the pod became ready. */
  cpuInitializationPeriodMs: number;
  /** A pod that is not ready and turned unready within this long of its start counts as never ready yet. */
  initialReadinessDelayMs: number;
  now: number;
}

export interface ReplicaProposal {
  replicas: number;
  /** Percent of the request (Utilization targets). */
  utilization?: number;
  /** The average usage over the pods counted, in milli-units. */
  averageMillis: number;
  /** When the metrics were taken. */
  timestamp: number;
}

export interface PodGroups {
  ready: Set<string>;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

export const isWithinTolerance = (ratio: number, tolerances: Tolerances) => 1 - tolerances.scaleDown <= ratio && ratio <= 1 + tolerances.scaleUp;

/** Each pod's usage of `resource` (of `container` only, when given); pods whose sample lacks it are left out. */
export function samplesFor(usage: readonly PodUsage[], resource: string, container?: string): Map<string, PodSample> {
  const samples = new Map<string, PodSample>();
  for (const pod of usage) {
    let value = 0;
    let complete = true;
    for (const c of pod.containers) {
      if (container !== undefined && c.name !== container) continue;
      const used = c.usage[resource];
      if (used === undefined) {
        complete = false;
        break;
      }
      value += used;
    }
    if (container !== undefined && !pod.containers.some((c) => c.name === container)) complete = false;
    if (complete) samples.set(pod.pod, { value, timestamp: pod.timestamp, windowMs: pod.windowMs });
  }
  return samples;
}

/**
 * Sorts the pods: deleted and failed ones are ignored; pending ones are unready; ones without a sample are
 * missing; for CPU, a pod whose sample may include its start-up burst is unready too.
 */
export function groupPods(pods: readonly Pod[], samples: ReadonlyMap<string, PodSample>, resource: string, settings: ReplicaSettings): PodGroups {
  const groups: PodGroups = { ready: new Set(), unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata.name!;
    if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed') {
      groups.ignored.add(name);
      continue;
    }
    if (pod.status?.phase === 'Pending') {
      groups.unready.add(name);
      continue;
    }
    const sample = samples.get(name);
    if (!sample) {
      groups.missing.add(name);
      continue;
    }
    if (resource === 'cpu' && isCpuUnready(pod, sample, settings)) {
      groups.unready.add(name);
      continue;
    }
    groups.ready.add(name);
  }
  return groups;
}

function isCpuUnready(pod: Pod, sample: PodSample, settings: ReplicaSettings): boolean {
  const ready = pod.status?.conditions?.find((condition) => condition.type === 'Ready');
  const started = pod.status?.startTime ? Date.parse(pod.status.startTime) : Number.NaN;
  if (!ready || Number.isNaN(started)) return true;
  const transition = ready.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : started;
  if (started + settings.cpuInitializationPeriodMs > settings.now) {
    // Still initializing: the sample must lie wholly after the pod became ready.
    return ready.status === 'False' || sample.timestamp < transition + sample.windowMs;
  }
  // Initialized: unready only if it has not been ready since shortly after its start.
  return ready.status === 'False' && started + settings.initialReadinessDelayMs > transition;
}

/** Each pod's request of `resource` (of `container` only, when given), in milli-units; a container without one is an error. */
export function podRequests(pods: readonly Pod[], resource: string, container?: string): Map<string, number> {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    let total = 0;
    const containers = container === undefined ? pod.spec.containers : pod.spec.containers.filter((c) => c.name === container);
    if (containers.length === 0) throw new HpaError('SKIFF_ERR_HPA_MISSING_REQUEST', { resource, container: container ?? '', pod: pod.metadata.name! });
    for (const c of containers) {
      const request = c.resources?.requests?.[resource];
      const millis = request === undefined ? 0 : parseCpuMillis(request);
      if (millis <= 0) throw new HpaError('SKIFF_ERR_HPA_MISSING_REQUEST', { resource, container: c.name, pod: pod.metadata.name! });
      total += millis;
    }
    requests.set(pod.metadata.name!, total);
  }
  return requests;
}

interface Usage {
  ratio: number;
  utilization?: number;
  averageMillis: number;
}

/** How a set of pod values compares with the target: the usage ratio (1 = on target) and what status shows. */
type Measure = (values: ReadonlyMap<string, number>) => Usage;

function utilizationMeasure(requests: ReadonlyMap<string, number>, targetUtilization: number): Measure {
  return (values) => {
    let used = 0;
    let requested = 0;
    let counted = 0;
    for (const [pod, value] of values) {
      const request = requests.get(pod);
      if (request === undefined) continue;
      used += value;
      requested += request;
      counted += 1;
    }
    if (counted === 0) throw new HpaError('SKIFF_ERR_HPA_NO_MATCHING_METRICS');
    const utilization = Math.trunc((used * 100) / requested);
    return { ratio: utilization / targetUtilization, utilization, averageMillis: Math.trunc(used / counted) };
  };
}

function averageMeasure(targetMillis: number): Measure {
  return (values) => {
    let used = 0;
    for (const value of values.values()) used += value;
    const averageMillis = Math.trunc(used / values.size);
    return { ratio: averageMillis / targetMillis, averageMillis };
  };
}

interface Calculation {
  pods: readonly Pod[];
  samples: ReadonlyMap<string, PodSample>;
  resource: string;
  currentReplicas: number;
  measure: Measure;
  /** The value a pod without metrics is taken to use when the others ask for fewer replicas. */
  missingOnScaleDown: (pod: string) => number;
}

function calculate(calc: Calculation, settings: ReplicaSettings): ReplicaProposal {
  const { pods, samples, resource, currentReplicas, measure } = calc;
  if (pods.length === 0) throw new HpaError('SKIFF_ERR_HPA_NO_PODS');
  const groups = groupPods(pods, samples, resource, settings);
  const values = new Map<string, number>();
  for (const pod of groups.ready) values.set(pod, samples.get(pod)!.value);
  if (values.size === 0) throw new HpaError('SKIFF_ERR_HPA_NO_READY_METRICS');
  const timestamp = samples.get(groups.ready.values().next().value!)!.timestamp;
  const first = measure(values);
  const proposal = (replicas: number): ReplicaProposal => ({
    replicas,
    averageMillis: first.averageMillis,
    timestamp,
    ...(first.utilization !== undefined ? { utilization: first.utilization } : {}),
  });
  const scaleUpWithUnready = groups.unready.size > 0 && first.ratio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (isWithinTolerance(first.ratio, settings.tolerances)) return proposal(currentReplicas);
    return proposal(Math.ceil(first.ratio * groups.ready.size));
  }
  // Assume the least favourable usage for the pods not measured, so they damp the change rather than drive it.
  if (first.ratio < 1) for (const pod of groups.missing) values.set(pod, calc.missingOnScaleDown(pod));
  else if (first.ratio > 1) for (const pod of groups.missing) values.set(pod, 0);
  if (scaleUpWithUnready) for (const pod of groups.unready) values.set(pod, 0);
  const second = measure(values);
  const flipped = (first.ratio < 1 && second.ratio > 1) || (first.ratio > 1 && second.ratio < 1);
  if (flipped || isWithinTolerance(second.ratio, settings.tolerances)) return proposal(currentReplicas);
  const replicas = Math.ceil(second.ratio * values.size);
  if ((second.ratio < 1 && replicas > currentReplicas) || (second.ratio > 1 && replicas < currentReplicas)) return proposal(currentReplicas);
  return proposal(replicas);
}

export interface ResourceMetricInput {
  pods: readonly Pod[];
  samples: ReadonlyMap<string, PodSample>;
  resource: string;
  /** ContainerResource metrics: only this container's requests and usage. */
  container?: string;
  currentReplicas: number;
}

/** A `Utilization` target: usage as a percentage of the pods' requests, Σusage / Σrequests. */
export function utilizationReplicas(input: ResourceMetricInput & { targetUtilization: number }, settings: ReplicaSettings): ReplicaProposal {
  const requests = podRequests(input.pods, input.resource, input.container);
  // A pod without metrics counts as using its request (or the target, when that is higher) on a scale-down.
  const fallback = Math.max(100, input.targetUtilization);
  return calculate(
    {
      ...{},
      ...input,
      measure: utilizationMeasure(requests, input.targetUtilization),
      missingOnScaleDown: (pod) => Math.trunc(((requests.get(pod) ?? 0) * fallback) / 100),
    },
    settings,
  );
}

/** An `AverageValue` target: the average usage per pod, in milli-units. */
export function averageValueReplicas(input: ResourceMetricInput & { targetAverageMillis: number }, settings: ReplicaSettings): ReplicaProposal {
  return calculate({ ...{}, ...input, measure: averageMeasure(input.targetAverageMillis), missingOnScaleDown: () => input.targetAverageMillis }, settings);
}
