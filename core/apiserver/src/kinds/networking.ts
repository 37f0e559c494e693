// networking.k8s.io/v1: ingresses and ingress classes, network policies, and the IP address and
// service CIDR objects behind cluster IP allocation.
import { isIP } from 'node:net';
import {
  defineKind,
  pathSegmentErrors,
  RESOURCES,
  type HTTPIngressPath,
  type Ingress,
  type IngressBackend,
  type IngressClass,
  type IPAddress,
  type NetworkPolicy,
  type NetworkPolicyPeer,
  type NetworkPolicyPort,
  type ResourceDefinition,
  type ServiceCIDR,
  type StatusCause,
} from '@skiff/api';
import {
  fieldErrors,
  isDNS1123Label,
  isDNS1123Subdomain,
  isValidCIDR,
  isValidPortName,
  isValidPortNumber,
  validateImmutable,
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '@skiff/api/validation';
import { AGE_COLUMN, computed, selectorCell } from './columns.js';

const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
const MAX_CONTROLLER_LENGTH = 250;
/** kubectl clips the Address column to 16 characters unless it prints wide. */
const ADDRESS_WIDTH = 16;

const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const WILDCARD_SUBDOMAIN = /^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A `domain/path` value such as a controller name (`example.com/ingress-nginx`). */
export function domainPrefixedPathErrors(value: string, field: string): StatusCause[] {
  if (!value) return [fieldErrors.required(field)];
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return [fieldErrors.invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const host = value.slice(0, slash);
  const path = value.slice(slash + 1);
  const causes = isDNS1123Subdomain(host).map((message) => fieldErrors.invalid(field, host, message));
  if (!HTTP_PATH.test(path)) causes.push(fieldErrors.invalid(field, path, "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"));
  return causes;
}

function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(value))
    errors.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  return errors;
}

/** A host that may start with `*.`, but may not be an IP address. */
function hostErrors(host: string, field: string): StatusCause[] {
  if (isIP(host)) return [fieldErrors.invalid(field, host, 'must be a DNS name, not an IP address')];
  if (host.includes('*')) {
    return WILDCARD_SUBDOMAIN.test(host) && host.length <= 253
      ? []
      : [
          fieldErrors.invalid(
            field,
            host,
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
          ),
        ];
  }
  return isDNS1123Subdomain(host).map((message) => fieldErrors.invalid(field, host, message));
}

const subdomainErrors = (value: string, field: string) => isDNS1123Subdomain(value).map((message) => fieldErrors.invalid(field, value, message));
const segmentErrors = (value: string, field: string) => pathSegmentErrors(value).map((message) => fieldErrors.invalid(field, value, message));

// ---- ingresses ------------------------------------------------------------------------------------------

function validateBackend(backend: IngressBackend, path: string): StatusCause[] {
  const { service, resource } = backend;
  if (service && resource) return [fieldErrors.invalid(path, '', 'cannot set both resource and service backends')];
  if (resource) {
    const causes: StatusCause[] = [];
    if (resource.apiGroup) causes.push(...subdomainErrors(resource.apiGroup, `${path}.resource.apiGroup`));
    if (!resource.kind) causes.push(fieldErrors.required(`${path}.resource.kind`));
    else causes.push(...segmentErrors(resource.kind, `${path}.resource.kind`));
    if (!resource.name) causes.push(fieldErrors.required(`${path}.resource.name`));
    else causes.push(...segmentErrors(resource.name, `${path}.resource.name`));
    return causes;
  }
  if (!service) return [fieldErrors.invalid(path, '', 'resource or service backend is required')];
  const causes: StatusCause[] = [];
  if (!service.name) causes.push(fieldErrors.required(`${path}.service.name`));
  else causes.push(...dns1035LabelErrors(service.name).map((message) => fieldErrors.invalid(`${path}.service.name`, service.name, message)));
  const portName = service.port?.name ?? '';
  const portNumber = service.port?.number ?? 0;
  if (portName && portNumber) causes.push(fieldErrors.invalid(path, '', 'cannot set both port name & port number'));
  else if (portName) causes.push(...isValidPortName(portName).map((message) => fieldErrors.invalid(`${path}.service.port.name`, portName, message)));
  else if (portNumber) causes.push(...isValidPortNumber(portNumber).map((message) => fieldErrors.invalid(`${path}.service.port.number`, portNumber, message)));
  else causes.push(fieldErrors.required(path, 'port name or number is required'));
  return causes;
}

const INVALID_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_PATH_SUFFIXES = ['/..', '/.'];

function validateIngressPath(ingressPath: HTTPIngressPath, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const path = ingressPath.path ?? '';
  switch (ingressPath.pathType) {
    case undefined:
      causes.push(fieldErrors.required(`${at}.pathType`, 'pathType must be specified'));
      break;
    case 'Exact':
    case 'Prefix':
      if (!path.startsWith('/')) causes.push(fieldErrors.invalid(`${at}.path`, path, 'must be an absolute path'));
      for (const sequence of INVALID_PATH_SEQUENCES)
        if (path.includes(sequence)) causes.push(fieldErrors.invalid(`${at}.path`, path, `must not contain '${sequence}'`));
      for (const suffix of INVALID_PATH_SUFFIXES)
        if (path.endsWith(suffix)) causes.push(fieldErrors.invalid(`${at}.path`, path, `cannot end with '${suffix}'`));
      break;
    case 'ImplementationSpecific':
      if (path && !path.startsWith('/')) causes.push(fieldErrors.invalid(`${at}.path`, path, 'must be an absolute path'));
      break;
    default:
      // Other values are reported by the generic enum check.
      break;
  }
  causes.push(...validateBackend(ingressPath.backend ?? {}, `${at}.backend`));
  return causes;
}

function validateIngress(ingress: Ingress, old?: Ingress): StatusCause[] {
  const spec = ingress.spec ?? {};
  const causes: StatusCause[] = [];
  const rules = spec.rules ?? [];
  if (rules.length === 0 && !spec.defaultBackend) causes.push(fieldErrors.invalid('spec.rules', [], 'either `defaultBackend` or `rules` must be specified'));
  if (spec.defaultBackend) causes.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((rule, i) => {
    const at = `spec.rules[${i}]`;
    if (rule.host) causes.push(...hostErrors(rule.host, `${at}.host`));
    if (rule.http) {
      const paths = rule.http.paths ?? [];
      if (paths.length === 0) causes.push(fieldErrors.required(`${at}.http.paths`));
      paths.forEach((path, j) => causes.push(...validateIngressPath(path, `${at}.http.paths[${j}]`)));
    }
  });
  (spec.tls ?? []).forEach((tls, i) => {
    (tls.hosts ?? []).forEach((host, j) => causes.push(...hostErrors(host, `spec.tls[${i}].hosts[${j}]`)));
    if (tls.secretName) causes.push(...subdomainErrors(tls.secretName, `spec.tls[${i}].secretName`));
  });
  if (spec.ingressClassName !== undefined) {
    causes.push(...subdomainErrors(spec.ingressClassName, 'spec.ingressClassName'));
    const annotation = ingress.metadata.annotations?.[INGRESS_CLASS_ANNOTATION];
    // The annotation is the class field's predecessor: a new ingress may not give both.
    if (!old && annotation !== undefined)
      causes.push(fieldErrors.invalid(`metadata.annotations[${INGRESS_CLASS_ANNOTATION}]`, annotation, 'can not be set when the class field is also set'));
  }
  return causes;
}

/** kubectl's Hosts cell: up to three hosts, then a count; `*` when no rule names one. */
function ingressHosts(ingress: Ingress): string {
  const rules = ingress.spec?.rules ?? [];
  const hosts = rules
    .slice(0, 3)
    .map((rule) => rule.host ?? '')
    .filter(Boolean);
  if (hosts.length === 0) return '*';
  return rules.length > 3 ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
}

function ingressAddress(ingress: Ingress): string {
  const addresses = [...new Set((ingress.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean))].sort();
  const text = addresses.join(',');
  return text.length > ADDRESS_WIDTH ? `${text.slice(0, ADDRESS_WIDTH - 3)}...` : text;
}

export const ingresses = defineKind<Ingress>({
  ...{},
  ...RESOURCES.ingresses,
  subresources: ['status'],
  columns: [
    computed('Class', (ing) => ing.spec?.ingressClassName ?? '<none>'),
    computed('Hosts', ingressHosts),
    computed('Address', ingressAddress),
    computed('Ports', (ing) => (ing.spec?.tls?.length ? '80, 443' : '80')),
    AGE_COLUMN,
  ],
  strategy: { validate: validateIngress },
});

// ---- ingress classes ------------------------------------------------------------------------------------

function validateIngressClass(ingressClass: IngressClass, old?: IngressClass): StatusCause[] {
  const spec = ingressClass.spec ?? {};
  const causes: StatusCause[] = [];
  const controller = spec.controller ?? '';
  if (controller.length > MAX_CONTROLLER_LENGTH) causes.push(fieldErrors.tooLong('spec.controller', MAX_CONTROLLER_LENGTH));
  causes.push(...domainPrefixedPathErrors(controller, 'spec.controller'));
  const parameters = spec.parameters;
  if (parameters) {
    const at = 'spec.parameters';
    if (parameters.apiGroup) causes.push(...subdomainErrors(parameters.apiGroup, `${at}.apiGroup`));
    if (parameters.kind) causes.push(...segmentErrors(parameters.kind, `${at}.kind`));
    if (parameters.name) causes.push(...segmentErrors(parameters.name, `${at}.name`));
    switch (parameters.scope) {
      case 'Namespace':
        if (!parameters.namespace) causes.push(fieldErrors.required(`${at}.namespace`, "`parameters.scope` is set to 'Namespace'"));
        else causes.push(...isDNS1123Label(parameters.namespace).map((message) => fieldErrors.invalid(`${at}.namespace`, parameters.namespace, message)));
        break;
      case 'Cluster':
        if (parameters.namespace) causes.push(fieldErrors.forbidden(`${at}.namespace`, "`parameters.scope` is set to 'Cluster'"));
        break;
      default:
        if (parameters.scope !== undefined) causes.push(fieldErrors.notSupported(`${at}.scope`, parameters.scope, ['Cluster', 'Namespace']));
    }
  }
  if (old) causes.push(...validateImmutable(controller, old.spec?.controller ?? '', 'spec.controller'));
  return causes;
}

function ingressClassParameters(ingressClass: IngressClass): string {
  const parameters = ingressClass.spec?.parameters;
  if (!parameters) return '<none>';
  return `${parameters.kind ?? ''}${parameters.apiGroup !== undefined ? `.${parameters.apiGroup}` : ''}/${parameters.name ?? ''}`;
}

export const ingressClasses = defineKind<IngressClass>({
  ...{},
  ...RESOURCES.ingressclasses,
  columns: [computed('Controller', (ic) => ic.spec?.controller ?? ''), computed('Parameters', ingressClassParameters), AGE_COLUMN],
  strategy: {
    defaults(object) {
      const parameters = object.spec?.parameters;
      if (parameters) parameters.scope ??= 'Cluster';
    },
    validate: validateIngressClass,
  },
});

// ---- network policies -----------------------------------------------------------------------------------

function validatePolicyPort(port: NetworkPolicyPort, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (port.endPort !== undefined) {
    if (port.port === undefined) causes.push(fieldErrors.required(`${at}.port`, 'must be specified when endPort is set'));
    else if (typeof port.port === 'string') causes.push(fieldErrors.invalid(`${at}.endPort`, port.endPort, 'may not be specified when `port` is non-numeric'));
    else if (port.endPort < port.port) causes.push(fieldErrors.invalid(`${at}.endPort`, port.endPort, 'must be greater than or equal to `port`'));
  }
  if (typeof port.port === 'number') {
    causes.push(...isValidPortNumber(port.port).map((message) => fieldErrors.invalid(`${at}.port`, port.port, message)));
    if (port.endPort !== undefined)
      causes.push(...isValidPortNumber(port.endPort).map((message) => fieldErrors.invalid(`${at}.endPort`, port.endPort, message)));
  } else if (typeof port.port === 'string') {
    causes.push(...isValidPortName(port.port).map((message) => fieldErrors.invalid(`${at}.port`, port.port, message)));
  }
  return causes;
}

function cidrRange(cidr: string): { family: number; start: bigint; end: bigint } | undefined {
  const [address = '', bits = ''] = cidr.split('/');
  const family = isIP(address);
  if (!family || isValidCIDR(cidr).length > 0) return undefined;
  const width = family === 4 ? 32 : 128;
  let value = 0n;
  if (family === 4) for (const octet of address.split('.')) value = (value << 8n) | BigInt(Number(octet));
  else {
    const [head = '', tail] = address.split('::');
    const groups = (part: string) => (part ? part.split(':') : []);
    const missing = width / 16 - groups(head).length - (tail === undefined ? 0 : groups(tail).length);
    const all = [...groups(head), ...(tail === undefined ? [] : [...Array<string>(missing).fill('0'), ...groups(tail)])];
    for (const group of all) value = (value << 16n) | BigInt(parseInt(group, 16) || 0);
  }
  const host = BigInt(width - Number(bits));
  const start = (value >> host) << host;
  return { family, start, end: start + (1n << host) - 1n };
}

function validatePeer(peer: NetworkPolicyPeer, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  let peers = 0;
  if (peer.podSelector) {
    peers++;
    causes.push(...validateLabelSelector(peer.podSelector, `${at}.podSelector`));
  }
  if (peer.namespaceSelector) {
    peers++;
    causes.push(...validateLabelSelector(peer.namespaceSelector, `${at}.namespaceSelector`));
  }
  if (peer.ipBlock) {
    peers++;
    const cidr = peer.ipBlock.cidr ?? '';
    if (cidr) causes.push(...isValidCIDR(cidr).map((message) => fieldErrors.invalid(`${at}.ipBlock.cidr`, cidr, message)));
    const outer = cidrRange(cidr);
    (peer.ipBlock.except ?? []).forEach((except, i) => {
      const field = `${at}.ipBlock.except[${i}]`;
      const problems = isValidCIDR(except);
      if (problems.length > 0) causes.push(...problems.map((message) => fieldErrors.invalid(field, except, message)));
      else if (outer) {
        const inner = cidrRange(except)!;
        const subset =
          inner.family === outer.family && inner.start >= outer.start && inner.end <= outer.end && inner.end - inner.start < outer.end - outer.start;
        if (!subset) causes.push(fieldErrors.invalid(field, except, 'must be a strict subset of `cidr`'));
      }
    });
  }
  if (peers === 0) causes.push(fieldErrors.required(at, 'must specify a peer'));
  else if (peers > 1 && peer.ipBlock) causes.push(fieldErrors.forbidden(at, 'may not specify both ipBlock and another peer'));
  return causes;
}

function validateNetworkPolicy(policy: NetworkPolicy): StatusCause[] {
  const spec = policy.spec ?? {};
  const causes = validateLabelSelector(spec.podSelector, 'spec.podSelector');
  (spec.ingress ?? []).forEach((rule, i) => {
    (rule.ports ?? []).forEach((port, j) => causes.push(...validatePolicyPort(port, `spec.ingress[${i}].ports[${j}]`)));
    (rule.from ?? []).forEach((peer, j) => causes.push(...validatePeer(peer, `spec.ingress[${i}].from[${j}]`)));
  });
  (spec.egress ?? []).forEach((rule, i) => {
    (rule.ports ?? []).forEach((port, j) => causes.push(...validatePolicyPort(port, `spec.egress[${i}].ports[${j}]`)));
    (rule.to ?? []).forEach((peer, j) => causes.push(...validatePeer(peer, `spec.egress[${i}].to[${j}]`)));
  });
  const policyTypes = spec.policyTypes ?? [];
  if (policyTypes.length > 2) causes.push(fieldErrors.invalid('spec.policyTypes', policyTypes, 'may not specify more than two policyTypes'));
  return causes;
}

export const networkPolicies = defineKind<NetworkPolicy>({
  ...{},
  ...RESOURCES.networkpolicies,
  columns: [computed('Pod-Selector', (np) => selectorCell(np.spec?.podSelector)), AGE_COLUMN],
  strategy: {
    // Ports default to TCP; a policy that names no types is an ingress policy, and an egress one too when it has egress rules.
    defaults(object) {
      const spec = (object.spec ??= {});
      for (const rule of [...(spec.ingress ?? []), ...(spec.egress ?? [])]) for (const port of rule.ports ?? []) port.protocol ??= 'TCP';
      if (!spec.policyTypes?.length) spec.policyTypes = spec.egress?.length ? ['Ingress', 'Egress'] : ['Ingress'];
    },
    validate: validateNetworkPolicy,
  },
});

// ---- IP addresses ---------------------------------------------------------------------------------------

/** The canonical text of an IP address (lower-case, IPv4 dotted, IPv6 shortest form), or undefined. */
function canonicalIP(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return /^(0|[1-9]\d{0,2})(\.(0|[1-9]\d{0,2})){3}$/.test(address) ? address : undefined;
  if (family !== 6) return undefined;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** IPAddress objects are named by the address they hold, in canonical form. */
function ipAddressName(name: string, prefix: boolean): string[] {
  if (prefix) return ['generateName is not supported'];
  const canonical = canonicalIP(name);
  if (canonical === undefined) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
  return canonical === name ? [] : [`must be in canonical form ("${canonical}")`];
}

function validateIPAddress(ip: IPAddress, old?: IPAddress): StatusCause[] {
  const causes = validateObjectMeta(ip.metadata, { namespaced: false, name: ipAddressName });
  const ref = ip.spec?.parentRef;
  if (ref) {
    const at = 'spec.parentRef';
    if (ref.group) causes.push(...subdomainErrors(ref.group, `${at}.group`));
    if (ref.resource) causes.push(...segmentErrors(ref.resource, `${at}.resource`));
    if (ref.namespace) causes.push(...isDNS1123Label(ref.namespace).map((message) => fieldErrors.invalid(`${at}.namespace`, ref.namespace, message)));
    if (ref.name) causes.push(...segmentErrors(ref.name, `${at}.name`));
  }
  if (old) {
    causes.push(...validateObjectMetaUpdate(ip.metadata, old.metadata));
    causes.push(...validateImmutable(ref, old.spec?.parentRef, 'spec.parentRef'));
  }
  return causes;
}

function ipAddressParent(ip: IPAddress): string {
  const ref = ip.spec?.parentRef;
  if (!ref) return '<none>';
  const groupResource = (ref.group ? `${ref.resource ?? ''}.${ref.group}` : (ref.resource ?? '')).toLowerCase();
  return `${groupResource}${ref.namespace ? `/${ref.namespace}` : ''}/${ref.name ?? ''}`;
}

export const ipAddresses = defineKind<IPAddress>({
  ...{},
  ...RESOURCES.ipaddresses,
  // Upstream's IPAddress table has no Age column.
  columns: [computed('ParentRef', ipAddressParent)],
  strategy: { validateAll: validateIPAddress },
});

// ---- service CIDRs --------------------------------------------------------------------------------------

function validateServiceCIDRs(cidrs: string[]): StatusCause[] {
  const field = 'spec.cidrs';
  if (cidrs.length === 0) return [fieldErrors.required(field, 'at least one CIDR required')];
  if (cidrs.length > 2) return [fieldErrors.invalid(field, cidrs, 'may only hold up to 2 values')];
  const causes: StatusCause[] = [];
  cidrs.forEach((cidr, i) => {
    const problems = isValidCIDR(cidr);
    if (problems.length > 0) causes.push(...problems.map((message) => fieldErrors.invalid(`${field}[${i}]`, cidr, message)));
  });
  if (causes.length === 0 && cidrs.length === 2 && isIP(cidrs[0]!.split('/')[0]!) === isIP(cidrs[1]!.split('/')[0]!))
    causes.push(fieldErrors.invalid(field, cidrs, 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64'));
  return causes;
}

export const serviceCIDRs = defineKind<ServiceCIDR>({
  ...{},
  ...RESOURCES.servicecidrs,
  subresources: ['status'],
  columns: [computed('CIDRs', (sc) => (sc.spec?.cidrs ?? []).join(',')), AGE_COLUMN],
  strategy: {
    validate(object, old) {
      const cidrs = object.spec?.cidrs ?? [];
      const causes = validateServiceCIDRs(cidrs);
      if (old) {
        const before = old.spec?.cidrs ?? [];
        // A single-stack range may gain a range of the other family; nothing else changes.
        const upgrade = before.length === 1 && cidrs.length === 2 && cidrs[0] === before[0];
        if (!upgrade) causes.push(...validateImmutable(cidrs, before, 'spec.cidrs'));
      }
      return causes;
    },
  },
});

export const NETWORKING_KINDS: ResourceDefinition[] = [ingressClasses, ingresses, ipAddresses, networkPolicies, serviceCIDRs];
