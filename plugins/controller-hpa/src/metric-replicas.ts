// One metric of an autoscaler: its pods' usage against its target, as a replica count, a status entry and
// the name upstream gives it in conditions and events.
import { errorMessage, formatCpuMillis, parseCpuMillis, type MetricSpec, type MetricStatus, type MetricValueStatus, type Pod } from '@skiff/api';
import { HpaError } from './errors.js';
import type { PodUsage } from './metrics-source.js';
import { averageValueReplicas, samplesFor, utilizationReplicas, type ReplicaProposal, type ReplicaSettings } from './replicas.js';

export interface MetricReplicas {
  replicas: number;
  /** "cpu resource utilization (percentage of request)", for ScalingActive's message and the rescale reason. */
  name: string;
  status: MetricStatus;
  timestamp: number;
}

export interface MetricInput {
  pods: readonly Pod[];
  /** The pods' usage, fetched once per sync however many metrics read it. */
  usage: () => Promise<readonly PodUsage[]>;
  currentReplicas: number;
}

/** The custom and external metrics APIs, which Skiff does not serve (yet): these metric types cannot be read. */
const UNSERVED_API: Readonly<Record<string, string>> = {
  Pods: 'custom.metrics.k8s.io',
  Object: 'custom.metrics.k8s.io',
  External: 'external.metrics.k8s.io',
};

export async function replicasForMetric(spec: MetricSpec, input: MetricInput, settings: ReplicaSettings): Promise<MetricReplicas> {
  if (spec.type === 'Resource' || spec.type === 'ContainerResource') {
    const source = spec.type === 'Resource' ? spec.resource : spec.containerResource;
    const container = spec.type === 'ContainerResource' ? spec.containerResource?.container : undefined;
    const resource = source?.name ?? '';
    const target = source?.target;
    const kindName = container === undefined ? 'resource' : 'container resource';
    const usageOrFail = async () => {
      let usage: readonly PodUsage[];
      try {
        usage = await input.usage();
      } catch (err) {
        throw new HpaError('SKIFF_ERR_HPA_METRICS_API', { resource, detail: errorMessage(err) }, { cause: err });
      }
      if (usage.length === 0) throw new HpaError('SKIFF_ERR_HPA_NO_METRICS', { resource });
      return samplesFor(usage, resource, container);
    };
    const common = { pods: input.pods, resource, currentReplicas: input.currentReplicas, ...(container !== undefined ? { container } : {}) };
    let proposal: ReplicaProposal;
    let name: string;
    // As upstream: an average value wins over a utilization when both are set.
    if (target?.averageValue !== undefined) {
      const targetAverageMillis = parseCpuMillis(target.averageValue);
      name = `${resource} ${kindName}`;
      proposal = await failing(`failed to get ${resource} usage`, async () =>
        averageValueReplicas({ ...{}, ...common, samples: await usageOrFail(), targetAverageMillis }, settings),
      );
    } else if (target?.averageUtilization !== undefined) {
      const targetUtilization = target.averageUtilization;
      name = `${resource} ${kindName} utilization (percentage of request)`;
      proposal = await failing(`failed to get ${resource} utilization`, async () =>
        utilizationReplicas({ ...{}, ...common, samples: await usageOrFail(), targetUtilization }, settings),
      );
    } else {
      throw new HpaError('SKIFF_ERR_HPA_INVALID_TARGET', { type: spec.type, detail: 'neither a utilization target nor an average value target was set' });
    }
    const current: MetricValueStatus = { averageValue: formatCpuMillis(proposal.averageMillis) };
    if (proposal.utilization !== undefined) current.averageUtilization = proposal.utilization;
    const status: MetricStatus =
      container === undefined
        ? { type: 'Resource', resource: { name: resource, current } }
        : { type: 'ContainerResource', containerResource: { name: resource, container, current } };
    return { replicas: proposal.replicas, name, status, timestamp: proposal.timestamp };
  }
  throw new HpaError('SKIFF_ERR_HPA_UNSUPPORTED_METRIC', { type: spec.type, api: UNSERVED_API[spec.type] ?? `the ${spec.type} metrics API` });
}

/** Runs `work`; a failure keeps its code and gains upstream's prefix ("failed to get cpu utilization: …"). */
async function failing<T>(prefix: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof HpaError) err.message = `${prefix}: ${err.message}`;
    throw err;
  }
}
