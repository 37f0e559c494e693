import { isIP } from 'node:net';
import {
  sameStringMap,
  type DiscoveryV1EndpointPort,
  type Endpoint,
  type EndpointAddress,
  type EndpointPort,
  type Endpoints,
  type EndpointSlice,
  type EndpointSubset,
} from '@skiff/api';
import { canonicalJson } from '@skiff/controller-manager';
import { ANNOTATION, LABEL, MANAGED_BY } from './names.js';

// The pure part of the mirroring controller: from a custom Endpoints object and the slices mirrored from it
// so far, the slices to create, update and delete. Nothing here talks to the API server.

export type AddressType = 'IPv4' | 'IPv6';
const ADDRESS_TYPES: readonly AddressType[] = ['IPv4', 'IPv6'];

/** An Endpoints subset after repacking: the addresses that serve exactly these ports. */
export interface PackedSubset {
  ports: EndpointPort[];
  addresses: EndpointAddress[];
  notReadyAddresses: EndpointAddress[];
}

const portId = (port: EndpointPort | DiscoveryV1EndpointPort) =>
  JSON.stringify([port.name ?? '', port.port ?? 0, port.protocol ?? 'TCP', port.appProtocol ?? '']);
/** An address is the same address in another subset when its IP and its target's uid are. */
const addressId = (address: EndpointAddress) => JSON.stringify([address.ip, address.targetRef?.uid ?? '']);

function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  const left = a.targetRef?.uid ?? '';
  const right = b.targetRef?.uid ?? '';
  return left === right ? 0 : left < right ? -1 : 1;
}

/**
 * Subsets regrouped the way Kubernetes normalises Endpoints: each distinct address (IP and target uid)
 * once per port, not ready in a port if any subset lists it not ready there, and ports that reach exactly
 * the same addresses (with the same readiness) in one subset. A subset without ports keeps its addresses
 * unless a subset with ports reaches the same ones.
 */
export function repackSubsets(subsets: readonly EndpointSubset[]): PackedSubset[] {
  const addresses = new Map<string, EndpointAddress>();
  const byPort = new Map<string, { port?: EndpointPort; ready: Map<string, boolean> }>();
  for (const subset of subsets) {
    for (const port of subset.ports?.length ? subset.ports : [undefined]) {
      const key = port ? portId(port) : '';
      let entry = byPort.get(key);
      if (!entry) byPort.set(key, (entry = { ...{}, ...(port ? { port } : {}), ready: new Map() }));
      for (const [list, ready] of [
        [subset.addresses, true],
        [subset.notReadyAddresses, false],
      ] as const) {
        for (const address of list ?? []) {
          const id = addressId(address);
          if (!addresses.has(id)) addresses.set(id, address);
          if (entry.ready.get(id) !== false) entry.ready.set(id, ready);
        }
      }
    }
  }
  const groups = new Map<string, { ports: EndpointPort[]; ready: Map<string, boolean> }>();
  for (const { port, ready } of byPort.values()) {
    const key = JSON.stringify([...ready].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ports: [], ready }));
    if (port) group.ports.push(port);
  }
  return [...groups.values()].map(({ ports, ready }) => {
    const pick = (wanted: boolean) => [...ready].filter(([, isReady]) => isReady === wanted).map(([id]) => addresses.get(id)!);
    return {
      ports: [...ports].sort((a, b) => (portId(a) < portId(b) ? -1 : portId(a) > portId(b) ? 1 : 0)),
      addresses: pick(true).sort(compareAddresses),
      notReadyAddresses: pick(false).sort(compareAddresses),
    };
  });
}

/** The slice address type of an IP (an IPv4-mapped IPv6 address counts as IPv4, as Go parses it); undefined for no IP. */
export function addressTypeOf(ip: string): AddressType | undefined {
  const family = isIP(ip);
  if (family === 4) return 'IPv4';
  if (family === 6) return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? 'IPv4' : 'IPv6';
  return undefined;
}

function slicePort(port: EndpointPort): DiscoveryV1EndpointPort {
  return {
    name: port.name ?? '',
    port: port.port,
    protocol: port.protocol ?? 'TCP',
    ...(port.appProtocol !== undefined ? { appProtocol: port.appProtocol } : {}),
  };
}

function toEndpoint(address: EndpointAddress, ready: boolean): Endpoint {
  return {
    addresses: [address.ip],
    conditions: { ready },
    ...(address.targetRef ? { targetRef: address.targetRef } : {}),
    ...(address.nodeName ? { nodeName: address.nodeName } : {}),
    ...(address.hostname ? { hostname: address.hostname } : {}),
  };
}

/** Which desired endpoint an existing one stands for. */
const endpointId = (endpoint: Endpoint) =>
  JSON.stringify([[...endpoint.addresses].sort(), endpoint.hostname ?? '', endpoint.targetRef?.namespace ?? '', endpoint.targetRef?.name ?? '']);
/** What this controller writes of an endpoint: equal projections need no write. */
const endpointFacts = (endpoint: Endpoint) =>
  canonicalJson([endpoint.addresses, endpoint.conditions?.ready ?? null, endpoint.hostname ?? '', endpoint.nodeName ?? '', endpoint.targetRef ?? null]);

/** Slices are matched to what they should hold by address type and ports (in any order). */
function sliceKey(addressType: string, ports: readonly (EndpointPort | DiscoveryV1EndpointPort)[]): string {
  return `${addressType}/${ports.map(portId).sort().join(',')}`;
}

interface DesiredSlice {
  addressType: AddressType;
  ports: DiscoveryV1EndpointPort[];
  endpoints: Map<string, Endpoint>;
}

export interface DesiredEndpoints {
  /** By slice key; a key whose endpoints are empty is one whose slices go. */
  slices: Map<string, DesiredSlice>;
  /** Addresses left out because their IP is not one. */
  invalid: number;
  /** Addresses left out in all: invalid ones and those beyond `maxEndpointsPerSubset`. */
  skipped: number;
}

/** The endpoints each mirrored slice should list: per repacked subset and address type, ready addresses first, at most `max` per subset. */
export function desiredEndpoints(endpoints: Endpoints, max: number): DesiredEndpoints {
  const result: DesiredEndpoints = { slices: new Map(), invalid: 0, skipped: 0 };
  for (const subset of repackSubsets(endpoints.subsets ?? [])) {
    const ports = subset.ports.map(slicePort);
    for (const addressType of ADDRESS_TYPES) {
      const key = sliceKey(addressType, ports);
      if (!result.slices.has(key)) result.slices.set(key, { addressType, ports, endpoints: new Map() });
    }
    const candidates = [
      ...subset.addresses.map((address) => [address, true] as const),
      ...subset.notReadyAddresses.map((address) => [address, false] as const),
    ];
    let added = 0;
    for (const [address, ready] of candidates) {
      if (added >= max) break;
      const addressType = addressTypeOf(address.ip);
      if (!addressType) {
        result.invalid++;
        continue;
      }
      const endpoint = toEndpoint(address, ready);
      result.slices.get(sliceKey(addressType, ports))!.endpoints.set(endpointId(endpoint), endpoint);
      added++;
    }
    result.skipped += candidates.length - added;
  }
  return result;
}

/** The Endpoints' annotations a mirrored slice carries: all but the trigger time and kubectl's last-applied configuration. */
function mirroredAnnotations(endpoints: Endpoints): Record<string, string> {
  const annotations: Record<string, string> = { ...endpoints.metadata.annotations };
  delete annotations[ANNOTATION.LAST_CHANGE_TRIGGER_TIME];
  delete annotations[ANNOTATION.LAST_APPLIED];
  return annotations;
}

function upToDate(slice: EndpointSlice, desired: DesiredSlice, endpoints: Endpoints): boolean {
  const current = slice.endpoints ?? [];
  if (current.length !== desired.endpoints.size) return false;
  for (const endpoint of current) {
    const wanted = desired.endpoints.get(endpointId(endpoint));
    if (!wanted || endpointFacts(wanted) !== endpointFacts(endpoint)) return false;
  }
  const ownLabels: Record<string, string> = { ...slice.metadata.labels };
  delete ownLabels[LABEL.MANAGED_BY];
  delete ownLabels[LABEL.SERVICE_NAME];
  return sameStringMap(endpoints.metadata.labels, ownLabels) && sameStringMap(mirroredAnnotations(endpoints), slice.metadata.annotations);
}

function buildSlice(endpoints: Endpoints, desired: DesiredSlice, max: number, replacing?: EndpointSlice): EndpointSlice {
  const name = endpoints.metadata.name!;
  const annotations = mirroredAnnotations(endpoints);
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...{},
      ...(replacing ? { name: replacing.metadata.name, resourceVersion: replacing.metadata.resourceVersion } : { generateName: `${name}-` }),
      namespace: endpoints.metadata.namespace,
      labels: { ...{}, ...endpoints.metadata.labels, [LABEL.SERVICE_NAME]: name, [LABEL.MANAGED_BY]: MANAGED_BY },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name, uid: endpoints.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    addressType: desired.addressType,
    ports: desired.ports,
    endpoints: [...desired.endpoints.values()].slice(0, max),
  };
}

export interface MirrorPlan {
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
  invalid: number;
  skipped: number;
}

/**
 * What to write so that `existing` (the slices mirrored from `endpoints`, none being deleted) mirror it:
 * one slice per address type and port set that has endpoints; a slice already there is rewritten only when
 * its endpoints, labels or annotations differ, and extra ones go. A slice about to be deleted is reused
 * (by name) for one of the same address type about to be created.
 */
export function planMirroring(endpoints: Endpoints, existing: readonly EndpointSlice[], max: number): MirrorPlan {
  const { slices: desired, invalid, skipped } = desiredEndpoints(endpoints, max);
  const existingByKey = new Map<string, EndpointSlice[]>();
  for (const slice of existing) {
    const key = sliceKey(slice.addressType, slice.ports ?? []);
    existingByKey.set(key, [...(existingByKey.get(key) ?? []), slice]);
  }
  const plan: MirrorPlan = { create: [], update: [], delete: [], invalid, skipped };
  for (const [key, wanted] of desired) {
    const [first, ...extra] = existingByKey.get(key) ?? [];
    if (wanted.endpoints.size === 0) {
      if (first) plan.delete.push(first, ...extra);
      continue;
    }
    plan.delete.push(...extra);
    if (first && upToDate(first, wanted, endpoints)) continue;
    (first ? plan.update : plan.create).push(buildSlice(endpoints, wanted, max, first));
  }
  for (const [key, slices] of existingByKey) if (!desired.has(key)) plan.delete.push(...slices);

  for (const slice of [...plan.create]) {
    const reusable = plan.delete.find((candidate) => candidate.addressType === slice.addressType);
    if (!reusable) continue;
    plan.delete.splice(plan.delete.indexOf(reusable), 1);
    plan.create.splice(plan.create.indexOf(slice), 1);
    const { generateName: _unused, ...metadata } = slice.metadata;
    plan.update.push({ ...{}, ...slice, metadata: { ...{}, ...metadata, name: reusable.metadata.name, resourceVersion: reusable.metadata.resourceVersion } });
  }
  return plan;
}
