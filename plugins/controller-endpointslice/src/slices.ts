import {
  findPort,
  isIPv6Address,
  isPodReady,
  isServiceIPSet,
  podIPs,
  RESOURCES,
  sameStringMap,
  shouldPodBeInEndpoints,
  shouldSetHostname,
  type DiscoveryV1EndpointPort,
  type Endpoint,
  type EndpointSlice,
  type Node,
  type OwnerReference,
  type Pod,
  type Service,
} from '@skiff/api';
import { newControllerRef } from '@skiff/controller-manager';
import { ANNOTATION, LABEL, MANAGED_BY } from './names.js';

// The pure part of the EndpointSlice controller: from a Service, its pods and the slices that exist, the
// slices to create, update and delete. Nothing here talks to the API server.

/** The address families this controller makes slices for (it never manages FQDN slices). */
export type AddressType = 'IPv4' | 'IPv6';

export interface SlicePlanInput {
  service: Service;
  /** The pods the Service's selector matches, in its namespace. */
  pods: readonly Pod[];
  /** The slices this controller manages for the Service (label `kubernetes.io/service-name`), none being deleted. */
  existing: readonly EndpointSlice[];
  /** The node a pod runs on, from the cache; `undefined` if unknown. */
  node: (name: string) => Node | undefined;
  maxEndpointsPerSlice: number;
  /** `endpoints.kubernetes.io/last-change-trigger-time` for the slices written; removed from them when undefined. */
  triggerTime?: string;
}

export interface SlicePlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
  /** Pods left out because their node is not known (yet); the Service should be looked at again. */
  podsOnUnknownNodes: string[];
}

const RESERVED_LABELS = new Set<string>([LABEL.SERVICE_NAME, LABEL.MANAGED_BY, LABEL.HEADLESS]);

/**
 * The address types a Service's slices carry: its `ipFamilies`; without them the family of its cluster IP;
 * for a Service with neither (headless, or no IP allocated yet), the families of its pods' IPs — IPv4 when
 * no pod has one yet.
 */
export function addressTypesFor(service: Service, pods: readonly Pod[]): AddressType[] {
  const families = (service.spec?.ipFamilies ?? []).filter((family): family is AddressType => family === 'IPv4' || family === 'IPv6');
  if (families.length > 0) return [...new Set(families)];
  if (isServiceIPSet(service)) return [isIPv6Address(service.spec!.clusterIP!) ? 'IPv6' : 'IPv4'];
  const seen = new Set<AddressType>();
  for (const pod of pods) for (const ip of podIPs(pod)) seen.add(isIPv6Address(ip) ? 'IPv6' : 'IPv4');
  return seen.size > 0 ? [...seen].sort() : ['IPv4'];
}

/** The ports a pod serves for a Service: each service port whose target the pod has, in the Service's order. */
export function endpointPorts(service: Service, pod: Pod): DiscoveryV1EndpointPort[] {
  const ports: DiscoveryV1EndpointPort[] = [];
  for (const servicePort of service.spec?.ports ?? []) {
    const port = findPort(pod, servicePort);
    if (port === undefined) continue;
    ports.push({
      name: servicePort.name ?? '',
      port,
      protocol: servicePort.protocol ?? 'TCP',
      ...(servicePort.appProtocol !== undefined ? { appProtocol: servicePort.appProtocol } : {}),
    });
  }
  return ports;
}

/** Identifies a set of ports whatever their order: slices group endpoints that serve the same ports. */
export function portsKey(ports: readonly DiscoveryV1EndpointPort[] | null | undefined): string {
  return JSON.stringify(
    (ports ?? [])
      .map((port) => [port.name ?? '', port.protocol ?? '', port.port ?? 0, port.appProtocol ?? ''])
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  );
}

/** The endpoint of a pod in a slice of `addressType`: its addresses of that family, conditions, node, zone and a reference to it. */
export function podToEndpoint(pod: Pod, node: Node | undefined, service: Service, addressType: AddressType): Endpoint {
  const serving = isPodReady(pod);
  const terminating = Boolean(pod.metadata.deletionTimestamp);
  const endpoint: Endpoint = {
    addresses: podIPs(pod).filter((ip) => isIPv6Address(ip) === (addressType === 'IPv6')),
    // A terminating pod is never ready, unless the Service publishes not-ready addresses.
    conditions: { ready: Boolean(service.spec?.publishNotReadyAddresses) || (serving && !terminating), serving, terminating },
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
  };
  if (pod.spec.nodeName) endpoint.nodeName = pod.spec.nodeName;
  const zone = node?.metadata.labels?.[LABEL.ZONE];
  if (zone) endpoint.zone = zone;
  if (shouldSetHostname(pod, service)) endpoint.hostname = pod.spec.hostname;
  return endpoint;
}

/** Which pod an endpoint stands for: one endpoint per pod in a Service's slices. */
export function endpointKey(endpoint: Endpoint): string {
  return endpoint.targetRef?.uid ?? `addresses:${(endpoint.addresses ?? []).join(',')}`;
}

/** Whether two endpoints say the same (a reference's resourceVersion does not count). */
export function sameEndpoint(a: Endpoint, b: Endpoint): boolean {
  const view = (endpoint: Endpoint) =>
    JSON.stringify([
      endpoint.addresses ?? [],
      endpoint.conditions?.ready ?? null,
      endpoint.conditions?.serving ?? null,
      endpoint.conditions?.terminating ?? null,
      endpoint.hostname ?? null,
      endpoint.nodeName ?? null,
      endpoint.zone ?? null,
      endpoint.hints ?? null,
      endpoint.targetRef ? [endpoint.targetRef.kind, endpoint.targetRef.namespace, endpoint.targetRef.name, endpoint.targetRef.uid] : null,
    ]);
  return view(a) === view(b);
}

/** A slice's labels: the Service's own (reserved keys aside), the headless marker, the Service's name and the manager. */
export function sliceLabels(service: Service): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(service.metadata.labels ?? {})) if (!RESERVED_LABELS.has(key)) labels[key] = value;
  if (!isServiceIPSet(service)) labels[LABEL.HEADLESS] = '';
  labels[LABEL.SERVICE_NAME] = service.metadata.name!;
  labels[LABEL.MANAGED_BY] = MANAGED_BY;
  return labels;
}

export function serviceOwnerReference(service: Service): OwnerReference {
  return newControllerRef(service, RESOURCES.services);
}

/** The slice belongs to this very Service (not to an earlier one of the same name). */
export function ownedBy(slice: EndpointSlice, service: Service): boolean {
  return (slice.metadata.ownerReferences ?? []).some((ref) => ref.uid === service.metadata.uid && ref.kind === 'Service' && ref.apiVersion === 'v1');
}

function newSlice(service: Service, ports: DiscoveryV1EndpointPort[], addressType: AddressType): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      generateName: `${service.metadata.name}-`,
      namespace: service.metadata.namespace,
      labels: sliceLabels(service),
      ownerReferences: [serviceOwnerReference(service)],
    },
    addressType,
    endpoints: [],
    ports,
  };
}

/** A slice that says "no endpoints", kept so that a Service with none still has one slice. */
function isPlaceholderOf(slice: EndpointSlice, placeholder: EndpointSlice): boolean {
  return (
    slice.metadata.namespace === placeholder.metadata.namespace &&
    sameStringMap(slice.metadata.labels, placeholder.metadata.labels) &&
    JSON.stringify(slice.metadata.ownerReferences ?? []) === JSON.stringify(placeholder.metadata.ownerReferences) &&
    slice.addressType === placeholder.addressType &&
    (slice.endpoints ?? []).length === 0 &&
    (slice.ports ?? []).length === 0
  );
}

interface Changes {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
}

/**
 * Brings the slices of one port set in line with the endpoints wanted for it, touching as few slices as it
 * can: endpoints stay where they are; a slice is rewritten only when one of its endpoints changed or went,
 * or its labels are stale; new endpoints go first into slices being rewritten anyway (fullest first), then
 * into the one unchanged slice they fill best, and only then into new slices.
 */
function reconcilePortSet(
  existing: readonly EndpointSlice[],
  wanted: Map<string, Endpoint>,
  template: () => EndpointSlice,
  labels: Record<string, string>,
  max: number,
): Changes {
  const rewritten = new Map<string, EndpointSlice>();
  const unchanged: EndpointSlice[] = [];
  const deleted: EndpointSlice[] = [];
  const remaining = new Map(wanted);
  for (const slice of existing) {
    const kept: Endpoint[] = [];
    let endpointsChanged = false;
    for (const endpoint of slice.endpoints ?? []) {
      const key = endpointKey(endpoint);
      const desired = remaining.get(key);
      if (!desired) {
        endpointsChanged = true;
        continue;
      }
      kept.push(desired);
      remaining.delete(key);
      if (!sameEndpoint(desired, endpoint)) endpointsChanged = true;
    }
    if (endpointsChanged && kept.length === 0) deleted.push(slice);
    else if (endpointsChanged || !sameStringMap(slice.metadata.labels, labels))
      rewritten.set(slice.metadata.name!, { ...{}, ...slice, metadata: { ...{}, ...slice.metadata, labels }, endpoints: kept });
    else unchanged.push(slice);
  }

  const queue = [...remaining.values()];
  const fill = (slice: EndpointSlice) => {
    const endpoints = [...(slice.endpoints ?? [])];
    while (queue.length > 0 && endpoints.length < max) endpoints.push(queue.shift()!);
    slice.endpoints = endpoints;
  };
  for (const slice of [...rewritten.values()].sort((a, b) => (b.endpoints?.length ?? 0) - (a.endpoints?.length ?? 0))) fill(slice);

  const created: EndpointSlice[] = [];
  while (queue.length > 0) {
    const target = queue.length < max ? fullestFit(unchanged, queue.length, max) : undefined;
    if (target) {
      unchanged.splice(unchanged.indexOf(target), 1);
      const copy = { ...{}, ...target, metadata: { ...target.metadata } };
      fill(copy);
      rewritten.set(copy.metadata.name!, copy);
    } else {
      const fresh = template();
      fill(fresh);
      created.push(fresh);
    }
  }
  return { create: created, update: [...rewritten.values()], delete: deleted };
}

/** Of the slices that can take `count` more endpoints, the one left fullest. */
function fullestFit(slices: readonly EndpointSlice[], count: number, max: number): EndpointSlice | undefined {
  let best: EndpointSlice | undefined;
  let bestRoom = max;
  for (const slice of slices) {
    const room = max - ((slice.endpoints?.length ?? 0) + count);
    if (room >= 0 && room < bestRoom) {
      best = slice;
      bestRoom = room;
    }
  }
  return best;
}

function planAddressType(input: SlicePlanInput, addressType: AddressType, existing: readonly EndpointSlice[], skipped: Set<string>): Changes {
  const { service, maxEndpointsPerSlice } = input;
  const labels = sliceLabels(service);
  const deleted: EndpointSlice[] = [];
  const existingByPorts = new Map<string, EndpointSlice[]>();
  for (const slice of existing) {
    if (!ownedBy(slice, service)) {
      deleted.push(slice);
      continue;
    }
    const key = portsKey(slice.ports);
    existingByPorts.set(key, [...(existingByPorts.get(key) ?? []), slice]);
  }

  const wanted = new Map<string, { ports: DiscoveryV1EndpointPort[]; endpoints: Map<string, Endpoint> }>();
  const pods = [...input.pods].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0));
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ports = endpointPorts(service, pod);
    const key = portsKey(ports);
    let group = wanted.get(key);
    if (!group) wanted.set(key, (group = { ports, endpoints: new Map() }));
    const node = pod.spec.nodeName ? input.node(pod.spec.nodeName) : undefined;
    // An unknown node is left out until it shows up, unless the Service publishes every address it can.
    if (!node && !service.spec?.publishNotReadyAddresses) {
      skipped.add(pod.metadata.name!);
      continue;
    }
    const endpoint = podToEndpoint(pod, node, service, addressType);
    if (endpoint.addresses.length > 0) group.endpoints.set(endpointKey(endpoint), endpoint);
  }

  const changes: Changes = { create: [], update: [], delete: deleted };
  for (const [key, group] of wanted) {
    const result = reconcilePortSet(
      existingByPorts.get(key) ?? [],
      group.endpoints,
      () => newSlice(service, group.ports, addressType),
      labels,
      maxEndpointsPerSlice,
    );
    changes.create.push(...result.create);
    changes.update.push(...result.update);
    changes.delete.push(...result.delete);
  }
  for (const [key, slices] of existingByPorts) if (!wanted.has(key)) changes.delete.push(...slices);

  // A Service with no endpoints keeps one empty slice.
  if (changes.create.length === 0 && changes.delete.length === existing.length) {
    const placeholder = newSlice(service, [], addressType);
    if (changes.delete.length === 1 && isPlaceholderOf(changes.delete[0]!, placeholder)) changes.delete = [];
    else changes.create.push(placeholder);
  }

  // Rather than delete one slice and create another, rewrite the one being deleted.
  for (let i = 0; i < changes.delete.length && changes.create.length > 0; ) {
    const doomed = changes.delete[i]!;
    if (doomed.addressType === addressType && ownedBy(doomed, service)) {
      const reused = changes.create.pop()!;
      changes.update.push({
        ...{},
        ...reused,
        metadata: { ...{}, ...reused.metadata, name: doomed.metadata.name, resourceVersion: doomed.metadata.resourceVersion },
      });
      changes.delete.splice(i, 1);
    } else i += 1;
  }
  return changes;
}

function withTriggerTime(slice: EndpointSlice, triggerTime: string | undefined): EndpointSlice {
  const { [ANNOTATION.LAST_CHANGE_TRIGGER_TIME]: _previous, ...others } = slice.metadata.annotations ?? {};
  const annotations = triggerTime ? { ...{}, ...others, [ANNOTATION.LAST_CHANGE_TRIGGER_TIME]: triggerTime } : others;
  const { annotations: _old, ...metadata } = slice.metadata;
  return { ...{}, ...slice, metadata: Object.keys(annotations).length > 0 ? { ...{}, ...metadata, annotations } : metadata };
}

/** The slices to create, update and delete so that a Service's slices show its pods. */
export function planSlices(input: SlicePlanInput): SlicePlan {
  const types = addressTypesFor(input.service, input.pods);
  const plan: SlicePlan = { create: [], update: [], delete: [], podsOnUnknownNodes: [] };
  const skipped = new Set<string>();
  plan.delete.push(...input.existing.filter((slice) => !types.some((type) => type === slice.addressType)));
  for (const addressType of types) {
    const changes = planAddressType(
      input,
      addressType,
      input.existing.filter((slice) => slice.addressType === addressType),
      skipped,
    );
    plan.create.push(...changes.create.map((slice) => withTriggerTime(slice, input.triggerTime)));
    plan.update.push(...changes.update.map((slice) => withTriggerTime(slice, input.triggerTime)));
    plan.delete.push(...changes.delete);
  }
  plan.podsOnUnknownNodes = [...skipped];
  return plan;
}
