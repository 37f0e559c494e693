import {
  findPort,
  isIPv6Address,
  isPodReady,
  isServiceIPSet,
  podIPs,
  sameStringMap,
  shouldPodBeInEndpoints,
  shouldSetHostname,
  type EndpointAddress,
  type EndpointPort,
  type Endpoints,
  type EndpointSubset,
  type Pod,
  type Service,
} from '@skiff/api';
import { ANNOTATION, LABEL, MAX_ENDPOINT_ADDRESSES, OVER_CAPACITY_TRUNCATED } from './names.js';

// The pure part of the Endpoints controller: from a Service and its pods, the Endpoints object it should have.

/** The IP family a Service's Endpoints list: its first `ipFamilies` entry, else its cluster IP's, else the pod's own. */
function wantsIPv6(service: Service, pod: Pod): boolean {
  const family = service.spec?.ipFamilies?.[0];
  if (family) return family === 'IPv6';
  if (isServiceIPSet(service)) return isIPv6Address(service.spec!.clusterIP!);
  const primary = podIPs(pod)[0];
  return primary !== undefined && isIPv6Address(primary);
}

/** The address of a pod in a Service's Endpoints, or `undefined` when the pod has no IP of the Service's family. */
export function podAddress(service: Service, pod: Pod): EndpointAddress | undefined {
  const ipv6 = wantsIPv6(service, pod);
  const ip = podIPs(pod).find((candidate) => isIPv6Address(candidate) === ipv6);
  if (!ip) return undefined;
  const address: EndpointAddress = { ip };
  if (shouldSetHostname(pod, service)) address.hostname = pod.spec.hostname;
  if (pod.spec.nodeName) address.nodeName = pod.spec.nodeName;
  address.targetRef = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
  return address;
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const portKey = (port: EndpointPort) => JSON.stringify([port.name ?? '', port.port, port.protocol ?? '', port.appProtocol ?? '']);
const compareAddresses = (a: EndpointAddress, b: EndpointAddress) => compareText(a.ip, b.ip) || compareText(a.targetRef?.uid ?? '', b.targetRef?.uid ?? '');

/**
 * The subsets of a Service's Endpoints: every pod that belongs (terminating ones only with
 * `publishNotReadyAddresses`), ready ones under `addresses`, the others under `notReadyAddresses`,
 * grouped so that each subset holds the addresses serving exactly the same ports. Sorted, so equal
 * content compares equal.
 */
export function buildSubsets(service: Service, pods: readonly Pod[]): EndpointSubset[] {
  const publishNotReady = Boolean(service.spec?.publishNotReadyAddresses);
  const servicePorts = service.spec?.ports ?? [];
  const groups = new Map<string, EndpointSubset & { addresses: EndpointAddress[]; notReadyAddresses: EndpointAddress[]; ports: EndpointPort[] }>();
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
    const address = podAddress(service, pod);
    if (!address) continue;
    let ports: EndpointPort[];
    if (servicePorts.length === 0) {
      // Only a headless Service may go without ports; its Endpoints then list bare addresses.
      if (service.spec?.clusterIP !== 'None') continue;
      ports = [];
    } else {
      ports = [];
      for (const servicePort of servicePorts) {
        const port = findPort(pod, servicePort);
        if (port === undefined) continue;
        ports.push({
          ...{},
          ...(servicePort.name ? { name: servicePort.name } : {}),
          port,
          protocol: servicePort.protocol ?? 'TCP',
          ...(servicePort.appProtocol !== undefined ? { appProtocol: servicePort.appProtocol } : {}),
        });
      }
      if (ports.length === 0) continue;
    }
    ports.sort((a, b) => compareText(portKey(a), portKey(b)));
    const key = JSON.stringify(ports.map(portKey));
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { addresses: [], notReadyAddresses: [], ports }));
    if (publishNotReady || isPodReady(pod)) group.addresses.push(address);
    else group.notReadyAddresses.push(address);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([, group]) =>
      compactSubset({
        addresses: group.addresses.sort(compareAddresses),
        notReadyAddresses: group.notReadyAddresses.sort(compareAddresses),
        ports: group.ports,
      }),
    );
}

/** Leaves empty lists out, as the API serialises them. */
function compactSubset(subset: EndpointSubset): EndpointSubset {
  return {
    ...{},
    ...(subset.addresses?.length ? { addresses: subset.addresses } : {}),
    ...(subset.notReadyAddresses?.length ? { notReadyAddresses: subset.notReadyAddresses } : {}),
    ...(subset.ports?.length ? { ports: subset.ports } : {}),
  };
}

const countAddresses = (subsets: readonly EndpointSubset[], field: 'addresses' | 'notReadyAddresses') =>
  subsets.reduce((sum, subset) => sum + (subset[field]?.length ?? 0), 0);

/**
 * Cuts subsets down to `max` addresses in all, as kube-controller-manager does: ready addresses go first;
 * the list that must shrink (the ready ones if they alone are too many, otherwise the not-ready ones) keeps
 * in each subset a share proportional to its size, rounded up, until the room is used.
 */
export function truncateSubsets(subsets: readonly EndpointSubset[], max = MAX_ENDPOINT_ADDRESSES): { subsets: EndpointSubset[]; truncated: boolean } {
  const ready = countAddresses(subsets, 'addresses');
  const notReady = countAddresses(subsets, 'notReadyAddresses');
  if (ready + notReady <= max) return { subsets: [...subsets], truncated: false };
  const shrinkReady = ready > max;
  const room = shrinkReady ? max : max - ready;
  const total = shrinkReady ? ready : notReady;
  let left = room;
  const truncated = subsets.map((subset) => {
    const field = shrinkReady ? 'addresses' : 'notReadyAddresses';
    const share = Math.min(Math.ceil(((subset[field]?.length ?? 0) / total) * room), left);
    const kept = (subset[field] ?? []).slice(0, share);
    left -= kept.length;
    return compactSubset(shrinkReady ? { ...{}, ...subset, addresses: kept, notReadyAddresses: [] } : { ...{}, ...subset, notReadyAddresses: kept });
  });
  return { subsets: truncated, truncated: true };
}

/** The labels of a Service's Endpoints: the Service's, the headless marker when it has no cluster IP, and skip-mirror. */
export function endpointsLabels(service: Service): Record<string, string> {
  const labels: Record<string, string> = { ...service.metadata.labels };
  if (isServiceIPSet(service)) delete labels[LABEL.HEADLESS];
  else labels[LABEL.HEADLESS] = '';
  labels[LABEL.SKIP_MIRROR] = 'true';
  return labels;
}

/** Whether two subset lists say the same (a reference's resourceVersion does not count). */
export function sameSubsets(a: readonly EndpointSubset[] | null | undefined, b: readonly EndpointSubset[] | null | undefined): boolean {
  const address = (entry: EndpointAddress) => [
    entry.ip,
    entry.hostname ?? '',
    entry.nodeName ?? '',
    entry.targetRef?.kind ?? '',
    entry.targetRef?.namespace ?? '',
    entry.targetRef?.name ?? '',
    entry.targetRef?.uid ?? '',
  ];
  const view = (subsets: readonly EndpointSubset[] | null | undefined) =>
    JSON.stringify(
      (subsets ?? []).map((subset) => [
        (subset.addresses ?? []).map(address),
        (subset.notReadyAddresses ?? []).map(address),
        (subset.ports ?? []).map(portKey),
      ]),
    );
  return view(a) === view(b);
}

export interface EndpointsPlanInput {
  service: Service;
  /** The pods the Service's selector matches. */
  pods: readonly Pod[];
  /** The Service's Endpoints as they are, if any. */
  current?: Endpoints;
  /** `endpoints.kubernetes.io/last-change-trigger-time` to publish; removed when undefined. */
  triggerTime?: string;
}

/** The Endpoints object to write for a Service, or `undefined` when the current one already says it all. */
export function planEndpoints({ service, pods, current, triggerTime }: EndpointsPlanInput): Endpoints | undefined {
  const { subsets, truncated } = truncateSubsets(buildSubsets(service, pods));
  const labels = endpointsLabels(service);
  const currentTruncated = current?.metadata.annotations?.[ANNOTATION.OVER_CAPACITY] === OVER_CAPACITY_TRUNCATED;
  if (current && sameSubsets(current.subsets, subsets) && sameStringMap(current.metadata.labels, labels) && currentTruncated === truncated) return undefined;

  const { [ANNOTATION.OVER_CAPACITY]: _capacity, [ANNOTATION.LAST_CHANGE_TRIGGER_TIME]: _trigger, ...annotations } = current?.metadata.annotations ?? {};
  if (triggerTime) annotations[ANNOTATION.LAST_CHANGE_TRIGGER_TIME] = triggerTime;
  if (truncated) annotations[ANNOTATION.OVER_CAPACITY] = OVER_CAPACITY_TRUNCATED;
  const { annotations: _old, ...metadata } = current?.metadata ?? { name: service.metadata.name, namespace: service.metadata.namespace };
  return {
    ...{},
    ...(current ?? { apiVersion: 'v1', kind: 'Endpoints' }),
    metadata: { ...{}, ...metadata, labels, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    subsets,
  };
}
