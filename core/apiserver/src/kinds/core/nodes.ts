// Nodes: their defaults, their rules and their `kubectl get` row.
import { defineKind, parseQuantity, RESOURCES, type Node, type Quantity, type StatusCause, type Taint } from '@skiff/api';
import {
  fieldErrors,
  GoLiteral,
  isValidCIDR,
  isValidLabelValue,
  nameIsDNSSubdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateQualifiedName,
  validateTaintEffect,
} from '@skiff/api/validation';
import { AGE_COLUMN, computed } from '../columns.js';
import { selectorField } from '../field-selectors.js';

/** Allocatable defaults to capacity. */
export function defaultNode(node: Node): void {
  const status = node.status;
  if (status?.capacity && !status.allocatable) status.allocatable = { ...status.capacity };
}

/** A string in a field error's printed value, quoted the way Go's %q quotes it. */
const goQuote = (value: string) => JSON.stringify(value);

const NODE_CIDR_MESSAGE = 'node updates may not change podCIDR except from "" to valid';

function validateTaints(taints: Taint[] | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  (taints ?? []).forEach((taint, i) => {
    const path = `${field}[${i}]`;
    causes.push(...validateQualifiedName(taint.key ?? '', `${path}.key`));
    const problems = isValidLabelValue(taint.value ?? '');
    if (problems.length) causes.push(fieldErrors.invalid(`${path}.value`, taint.value ?? '', problems.join(';')));
    causes.push(...validateTaintEffect(taint.effect, false, `${path}.effect`));
    const id = `${taint.effect}\u0000${taint.key}`;
    if (seen.has(id)) {
      const printed = new GoLiteral(
        `core.Taint{Key:${goQuote(taint.key ?? '')}, Value:${goQuote(taint.value ?? '')}, Effect:${goQuote(taint.effect ?? '')}, TimeAdded:<nil>}`,
      );
      causes.push(fieldErrors.duplicate(path, printed, 'taints must be unique by key and effect pair'));
    }
    seen.add(id);
  });
  return causes;
}

function validateResourceList(list: Record<string, Quantity> | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const name of Object.keys(list ?? {}).sort()) {
    const quantity = list![name]!;
    if (parseQuantity(quantity) < 0) causes.push(fieldErrors.invalid(`${field}.${name}`, String(quantity), 'must be greater than or equal to 0'));
  }
  return causes;
}

function validatePodCIDRs(cidrs: string[] | undefined): StatusCause[] {
  if (!cidrs?.length) return [];
  const causes: StatusCause[] = [];
  cidrs.forEach((cidr, i) => causes.push(...isValidCIDR(cidr).map((message) => fieldErrors.invalid(`spec.podCIDRs[${i}]`, cidr, message))));
  if (causes.length) return causes;
  const families = new Set(cidrs.map((c) => (c.includes(':') ? 6 : 4)));
  if (cidrs.length > 2 || (cidrs.length === 2 && families.size !== 2)) {
    const printed = new GoLiteral(`[]string{${cidrs.map(goQuote).join(', ')}}`);
    causes.push(fieldErrors.invalid('spec.podCIDRs', printed, 'may specify no more than one CIDR for each IP family'));
  }
  return causes;
}

function validateNodeUpdate(node: Node, old: Node): StatusCause[] {
  const causes = validateObjectMetaUpdate(node.metadata, old.metadata);
  const seen = new Set<string>();
  (node.status?.addresses ?? []).forEach((address, i) => {
    const id = `${address.type}\u0000${address.address}`;
    if (seen.has(id)) {
      const printed = new GoLiteral(`core.NodeAddress{Type:${goQuote(address.type)}, Address:${goQuote(address.address)}}`);
      causes.push(fieldErrors.duplicate(`status.addresses[${i}]`, printed));
    }
    seen.add(id);
  });
  const oldCIDRs = old.spec?.podCIDRs ?? [];
  const newCIDRs = node.spec?.podCIDRs ?? [];
  if (oldCIDRs.length > 0) {
    if (oldCIDRs.length !== newCIDRs.length) causes.push(fieldErrors.forbidden('spec.podCIDRs', NODE_CIDR_MESSAGE));
    else oldCIDRs.forEach((cidr, i) => cidr !== newCIDRs[i] && causes.push(fieldErrors.forbidden('spec.podCIDRs', NODE_CIDR_MESSAGE)));
  }
  const oldProvider = old.spec?.providerID ?? '';
  if (oldProvider && oldProvider !== (node.spec?.providerID ?? '')) {
    causes.push(fieldErrors.forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  return causes;
}

/** Node names are DNS subdomains; taints, pod CIDRs and resource quantities must be valid. */
export function validateNode(node: Node, old?: Node): StatusCause[] {
  const causes = validateObjectMeta(node.metadata, { namespaced: false, name: nameIsDNSSubdomain });
  causes.push(...validateTaints(node.spec?.taints, 'spec.taints'));
  causes.push(...validateResourceList(node.status?.capacity, 'status.capacity'));
  causes.push(...validateResourceList(node.status?.allocatable, 'status.allocatable'));
  causes.push(...validatePodCIDRs(node.spec?.podCIDRs));
  if (old) causes.push(...validateNodeUpdate(node, old));
  return causes;
}

const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';
const LEGACY_ROLE_LABEL = 'kubernetes.io/role';

/** Roles from `node-role.kubernetes.io/<role>` labels and the legacy `kubernetes.io/role`, sorted. */
function nodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith(ROLE_LABEL_PREFIX) && key.length > ROLE_LABEL_PREFIX.length) roles.add(key.slice(ROLE_LABEL_PREFIX.length));
    else if (key === LEGACY_ROLE_LABEL && value) roles.add(value);
  }
  return [...roles].sort();
}

/** "Ready", "NotReady" or "Unknown" from the Ready condition, plus ",SchedulingDisabled" when cordoned. */
function nodeStatus(node: Node): string {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) status.push('SchedulingDisabled');
  return status.join(',');
}

const nodeAddress = (type: string) =>
  computed<Node>(`${type === 'InternalIP' ? 'Internal' : 'External'}-IP`, (node) => node.status?.addresses?.find((a) => a.type === type)?.address ?? '<none>', {
    priority: 1,
  });
const nodeInfo = (name: string, key: 'osImage' | 'kernelVersion' | 'containerRuntimeVersion') =>
  computed<Node>(name, (node) => node.status?.nodeInfo?.[key] || '<unknown>', { priority: 1 });

export const nodes = defineKind<Node>({
  ...{},
  ...RESOURCES.nodes,
  subresources: ['status', 'proxy'],
  columns: [
    computed<Node>('Status', nodeStatus),
    computed<Node>('Roles', (node) => nodeRoles(node).join(',') || '<none>'),
    AGE_COLUMN,
    computed<Node>('Version', (node) => node.status?.nodeInfo?.kubeletVersion ?? ''),
    nodeAddress('InternalIP'),
    nodeAddress('ExternalIP'),
    nodeInfo('OS-Image', 'osImage'),
    nodeInfo('Kernel-Version', 'kernelVersion'),
    nodeInfo('Container-Runtime', 'containerRuntimeVersion'),
  ],
  strategy: {
    defaults: defaultNode,
    validateAll: validateNode,
    prepareForCreate() {},
    fieldSelectors: { 'spec.unschedulable': selectorField<Node>((node) => Boolean(node.spec?.unschedulable)) },
  },
});
