import { parseBytes, parseCpuMillis, parseQuantity, type Container, type Pod, type ResourceList } from '@skiff/api';
import type { ResourceAmounts } from '@skiff/kernel';

/** What a container without a cpu request counts as when scoring (Kubernetes' DefaultMilliCPURequest). */
export const DEFAULT_MILLI_CPU_REQUEST = 100;
/** What a container without a memory request counts as when scoring (Kubernetes' DefaultMemoryRequest, 200Mi). */
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

export function emptyAmounts(): ResourceAmounts {
  return { milliCPU: 0, memory: 0, pods: 0 };
}

/** Converts a ResourceList (`{ cpu: '500m', memory: '1Gi', pods: 110, 'example.com/gpu': 2 }`) to scheduler units. */
export function amountsFromResourceList(list: ResourceList | undefined): ResourceAmounts {
  const amounts = emptyAmounts();
  if (list) addResourceList(amounts, list);
  return amounts;
}

function addResourceList(target: ResourceAmounts, list: ResourceList): void {
  for (const [name, quantity] of Object.entries(list)) {
    switch (name) {
      case 'cpu':
        target.milliCPU += parseCpuMillis(quantity);
        break;
      case 'memory':
        target.memory += parseBytes(quantity);
        break;
      case 'pods':
        target.pods += parseQuantity(quantity);
        break;
      default:
        target.scalar ??= {};
        target.scalar[name] = (target.scalar[name] ?? 0) + parseQuantity(quantity);
    }
  }
}

export function addAmounts(target: ResourceAmounts, other: ResourceAmounts, sign: 1 | -1 = 1): void {
  target.milliCPU += sign * other.milliCPU;
  target.memory += sign * other.memory;
  target.pods += sign * other.pods;
  if (other.scalar) {
    target.scalar ??= {};
    for (const [name, value] of Object.entries(other.scalar)) target.scalar[name] = (target.scalar[name] ?? 0) + sign * value;
  }
}

function maxInto(target: ResourceAmounts, other: ResourceAmounts): void {
  target.milliCPU = Math.max(target.milliCPU, other.milliCPU);
  target.memory = Math.max(target.memory, other.memory);
  if (other.scalar) {
    target.scalar ??= {};
    for (const [name, value] of Object.entries(other.scalar)) target.scalar[name] = Math.max(target.scalar[name] ?? 0, value);
  }
}

export interface PodRequestOptions {
  /**
   * Count a container that sets no cpu or memory request as 100m / 200Mi, the way Kubernetes scores
   * (so a node full of request-less pods does not look empty). Fit checks count them as zero.
   */
  nonZeroDefaults?: boolean;
}

function containerRequests(container: Container, options: PodRequestOptions): ResourceAmounts {
  // API defaulting copies limits into unset requests; doing the same here keeps the scheduler right
  // for objects stored before (or without) that defaulting.
  const resources = container.resources;
  const list: ResourceList = { ...{}, ...resources?.limits, ...resources?.requests };
  const amounts = amountsFromResourceList(list);
  if (options.nonZeroDefaults) {
    if (list.cpu === undefined) amounts.milliCPU = DEFAULT_MILLI_CPU_REQUEST;
    if (list.memory === undefined) amounts.memory = DEFAULT_MEMORY_REQUEST;
  }
  return amounts;
}

/**
 * The resources a pod needs on a node, with Kubernetes' rules: the sum of its containers, raised to the
 * largest init container (init containers run one at a time, before the others); sidecars (init
 * containers with restartPolicy Always) keep running, so they add to both; plus spec.overhead.
 * `pods` is always 1.
 */
export function podRequests(pod: Pod, options: PodRequestOptions = {}): ResourceAmounts {
  const total = emptyAmounts();
  for (const container of pod.spec.containers ?? []) addAmounts(total, containerRequests(container, options));

  const sidecars = emptyAmounts();
  const initPeak = emptyAmounts();
  for (const container of pod.spec.initContainers ?? []) {
    const requests = containerRequests(container, options);
    if (container.restartPolicy === 'Always') {
      addAmounts(total, requests);
      addAmounts(sidecars, requests);
      maxInto(initPeak, sidecars);
    } else {
      addAmounts(requests, sidecars);
      maxInto(initPeak, requests);
    }
  }
  maxInto(total, initPeak);

  const overhead = pod.spec.overhead;
  if (overhead) addResourceList(total, overhead);
  total.pods = 1;
  return total;
}
