import {
  formatBytes,
  formatCpuMillis,
  formatQuantity,
  parseCpuMillis,
  type Container,
  type LimitRange,
  type LimitRangeItem,
  type PersistentVolumeClaim,
  type Pod,
  type Quantity,
} from '@skiff/api';
import { itemsOfType } from './items.js';

type ResourceList = Record<string, Quantity>;

/** What a pod or claim breaks of the namespace's LimitRanges, in kube-apiserver's words; empty when nothing. */
export function podViolations(pod: Pod, ranges: LimitRange[]): string[] {
  const violations: string[] = [];
  const containers: Container[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const item of itemsOfType(ranges, 'Container'))
    for (const container of containers) violations.push(...check(item, 'Container', container.resources?.requests ?? {}, container.resources?.limits ?? {}));
  const pods = itemsOfType(ranges, 'Pod');
  if (pods.length > 0) {
    const { requests, limits } = podTotals(pod);
    for (const item of pods) violations.push(...check(item, 'Pod', requests, limits));
  }
  return violations;
}

export function claimViolations(claim: PersistentVolumeClaim, ranges: LimitRange[]): string[] {
  const requests = claim.spec?.resources?.requests ?? {};
  const violations: string[] = [];
  // Only a claim's requests count: its limits are no user input to a LimitRange.
  for (const item of itemsOfType(ranges, 'PersistentVolumeClaim')) {
    for (const [name, min] of Object.entries(item.min ?? {})) violations.push(...minimum('PersistentVolumeClaim', name, min, requests, {}));
    for (const [name, max] of Object.entries(item.max ?? {})) {
      const request = requests[name];
      if (request === undefined) violations.push(`maximum ${name} usage per PersistentVolumeClaim is ${show(max)}.  No request is specified`);
      else if (milli(request) > milli(max)) violations.push(`maximum ${name} usage per PersistentVolumeClaim is ${show(max)}, but request is ${show(request)}`);
    }
  }
  return violations;
}

/** Upstream's aggregate: each message once; one alone, several in brackets. */
export function aggregate(violations: string[]): string {
  const distinct = [...new Set(violations)];
  return distinct.length === 1 ? distinct[0]! : `[${distinct.join(', ')}]`;
}

function check(item: LimitRangeItem, type: string, requests: ResourceList, limits: ResourceList): string[] {
  const violations: string[] = [];
  for (const [name, min] of Object.entries(item.min ?? {})) violations.push(...minimum(type, name, min, requests, limits));
  for (const [name, max] of Object.entries(item.max ?? {})) violations.push(...maximum(type, name, max, requests, limits));
  for (const [name, ratio] of Object.entries(item.maxLimitRequestRatio ?? {})) violations.push(...limitRequestRatio(type, name, ratio, requests, limits));
  return violations;
}

function minimum(type: string, name: string, min: Quantity, requests: ResourceList, limits: ResourceList): string[] {
  const request = requests[name];
  const limit = limits[name];
  if (request === undefined) return [`minimum ${name} usage per ${type} is ${show(min)}.  No request is specified`];
  if (milli(request) < milli(min)) return [`minimum ${name} usage per ${type} is ${show(min)}, but request is ${show(request)}`];
  if (limit !== undefined && milli(limit) < milli(min)) return [`minimum ${name} usage per ${type} is ${show(min)}, but limit is ${show(limit)}`];
  return [];
}

function maximum(type: string, name: string, max: Quantity, requests: ResourceList, limits: ResourceList): string[] {
  const request = requests[name];
  const limit = limits[name];
  if (limit === undefined) return [`maximum ${name} usage per ${type} is ${show(max)}.  No limit is specified`];
  if (milli(limit) > milli(max)) return [`maximum ${name} usage per ${type} is ${show(max)}, but limit is ${show(limit)}`];
  if (request !== undefined && milli(request) > milli(max)) return [`maximum ${name} usage per ${type} is ${show(max)}, but request is ${show(request)}`];
  return [];
}

function limitRequestRatio(type: string, name: string, ratio: Quantity, requests: ResourceList, limits: ResourceList): string[] {
  const request = requests[name];
  const limit = limits[name];
  if (request === undefined || milli(request) === 0)
    return [`${name} max limit to request ratio per ${type} is ${show(ratio)}, but no request is specified or request is 0`];
  if (limit === undefined || milli(limit) === 0)
    return [`${name} max limit to request ratio per ${type} is ${show(ratio)}, but no limit is specified or limit is 0`];
  const observed = milli(limit) / milli(request);
  if (observed * 1000 > milli(ratio)) return [`${name} max limit to request ratio per ${type} is ${show(ratio)}, but provided ratio is ${observed.toFixed(6)}`];
  return [];
}

/**
 * A pod's requests and limits as a Pod limit sees them: its containers' sums, at least its largest init
 * container; a limit only when every container states one (one without a limit is unbounded).
 */
export function podTotals(pod: Pod): { requests: ResourceList; limits: ResourceList } {
  const containers = pod.spec?.containers ?? [];
  const inits = pod.spec?.initContainers ?? [];
  const total = (part: 'requests' | 'limits', everyone: boolean): ResourceList => {
    const sums = new Map<string, number>();
    const names = new Set(containers.flatMap((c) => Object.keys(c.resources?.[part] ?? {})));
    for (const name of names) {
      if (everyone && containers.some((c) => c.resources?.[part]?.[name] === undefined)) continue;
      sums.set(
        name,
        containers.reduce((sum, c) => sum + (c.resources?.[part]?.[name] !== undefined ? milli(c.resources[part][name]) : 0), 0),
      );
    }
    for (const init of inits)
      for (const [name, value] of Object.entries(init.resources?.[part] ?? {}))
        if (sums.has(name) || !everyone) sums.set(name, Math.max(sums.get(name) ?? 0, milli(value)));
    return Object.fromEntries([...sums].map(([name, value]) => [name, fromMilli(name, value)]));
  };
  return { requests: total('requests', false), limits: total('limits', true) };
}

function milli(quantity: Quantity): number {
  return parseCpuMillis(quantity);
}

/** A sum back as a quantity, written as the containers' quantities usually are: `1500m`, `1536Mi`. */
function fromMilli(name: string, value: number): string {
  if (name === 'cpu' || value % 1000 !== 0) return formatCpuMillis(value);
  return /memory|storage|hugepages/.test(name) ? formatBytes(value / 1000) : String(value / 1000);
}

function show(quantity: Quantity): string {
  try {
    return formatQuantity(quantity);
  } catch {
    return String(quantity);
  }
}
