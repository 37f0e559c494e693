// discovery.k8s.io/v1: endpoint slices.
import { isIPv4, isIPv6 } from 'node:net';
import { defineKind, RESOURCES, type EndpointSlice, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, validateImmutable, validateLabels } from '@skiff/api/validation';
import { AGE_COLUMN, computed } from './columns.js';

const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_ZONE_HINTS = 8;
const MAX_NODE_HINTS = 8;
/** kubectl lists this many ports or addresses, then a count. */
const LISTED = 3;

function addressErrors(address: string, addressType: string | undefined): string[] {
  switch (addressType) {
    case 'IPv4':
      return isIPv4(address) ? [] : ['must be a valid IPv4 address'];
    case 'IPv6':
      return isIPv6(address) ? [] : ['must be a valid IPv6 address'];
    case 'FQDN':
      return isDNS1123Subdomain(address);
    default:
      return [];
  }
}

function validateEndpoints(slice: EndpointSlice): StatusCause[] {
  const endpoints = slice.endpoints ?? [];
  const causes: StatusCause[] = [];
  if (endpoints.length > MAX_ENDPOINTS) causes.push(fieldErrors.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
  endpoints.forEach((endpoint, i) => {
    const at = `endpoints[${i}]`;
    const addresses = endpoint.addresses ?? [];
    if (addresses.length === 0) causes.push(fieldErrors.required(`${at}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) causes.push(fieldErrors.tooMany(`${at}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((address, j) => {
      causes.push(...addressErrors(address, slice.addressType).map((message) => fieldErrors.invalid(`${at}.addresses[${j}]`, address, message)));
    });
    if (endpoint.nodeName)
      causes.push(...isDNS1123Subdomain(endpoint.nodeName).map((message) => fieldErrors.invalid(`${at}.nodeName`, endpoint.nodeName, message)));
    if (endpoint.hostname)
      causes.push(...isDNS1123Label(endpoint.hostname).map((message) => fieldErrors.invalid(`${at}.hostname`, endpoint.hostname, message)));
    causes.push(...validateLabels(endpoint.deprecatedTopology, `${at}.deprecatedTopology`));
    const zones = endpoint.hints?.forZones ?? [];
    if (zones.length > MAX_ZONE_HINTS) causes.push(fieldErrors.tooMany(`${at}.hints.forZones`, zones.length, MAX_ZONE_HINTS));
    const nodes = endpoint.hints?.forNodes ?? [];
    if (nodes.length > MAX_NODE_HINTS) causes.push(fieldErrors.tooMany(`${at}.hints.forNodes`, nodes.length, MAX_NODE_HINTS));
  });
  return causes;
}

function validatePorts(slice: EndpointSlice): StatusCause[] {
  const ports = slice.ports ?? [];
  const causes: StatusCause[] = [];
  if (ports.length > MAX_PORTS) causes.push(fieldErrors.tooMany('ports', ports.length, MAX_PORTS));
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = `ports[${i}]`;
    const name = port.name ?? '';
    if (name) causes.push(...isDNS1123Label(name).map((message) => fieldErrors.invalid(`${at}.name`, name, message)));
    if (names.has(name)) causes.push(fieldErrors.duplicate(`${at}.name`, name));
    names.add(name);
    if (port.appProtocol)
      causes.push(...isQualifiedName(port.appProtocol).map((message) => fieldErrors.invalid(`${at}.appProtocol`, port.appProtocol, message)));
  });
  return causes;
}

/** kubectl's list cells: up to three entries, then a count; `<unset>` for none. */
function listCell(items: string[]): string {
  if (items.length === 0) return '<unset>';
  return items.length > LISTED ? `${items.slice(0, LISTED).join(',')} + ${items.length - LISTED} more...` : items.join(',');
}

export const endpointSlices = defineKind<EndpointSlice>({
  ...{},
  ...RESOURCES.endpointslices,
  columns: [
    computed<EndpointSlice>('AddressType', (slice) => slice.addressType ?? ''),
    computed<EndpointSlice>('Ports', (slice) =>
      listCell((slice.ports ?? []).map((port) => (port.port !== undefined ? String(port.port) : (port.name ?? '*')))),
    ),
    computed<EndpointSlice>('Endpoints', (slice) => listCell((slice.endpoints ?? []).flatMap((endpoint) => endpoint.addresses ?? []))),
    AGE_COLUMN,
  ],
  strategy: {
    validate(slice, old) {
      const causes = [...validateEndpoints(slice), ...validatePorts(slice)];
      if (old) causes.push(...validateImmutable(slice.addressType, old.addressType, 'addressType'));
      return causes;
    },
  },
});

export const DISCOVERY_KINDS: ResourceDefinition[] = [endpointSlices];
