// Cluster-scoped kinds: Namespaces and Nodes.
import { parseQuantity } from '../quantity.js';
import type { Namespace, Node, StatusCause } from '../types.js';
import { child, duplicate, forbidden, GoLiteral, goQuote, goStringSlice, index, invalid, NEGATIVE_MESSAGE } from './field.js';
import { validateLabelName, validateObjectMeta, validateObjectMetaUpdate } from './meta.js';
import { isQualifiedName, isValidCIDR, isValidLabelValue, nameIsDNSLabel, nameIsDNSSubdomain } from './names.js';
import { validateTaintEffect } from './tolerations.js';

/** Finalizer names without a domain that Kubernetes defines itself. */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

function validateNamespaceFinalizer(name: string, field: string): StatusCause[] {
  const causes = isQualifiedName(name).map((message) => invalid(field, name, message));
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
    causes.push(invalid(field, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return causes;
}

/** Namespace names are DNS labels; spec.finalizers are standard or domain-qualified. */
export function validateNamespace(namespace: Namespace, old?: Namespace): StatusCause[] {
  const causes = validateObjectMeta(namespace.metadata, { namespaced: false, name: nameIsDNSLabel });
  for (const finalizer of namespace.spec?.finalizers ?? []) causes.push(...validateNamespaceFinalizer(finalizer, 'spec.finalizers'));
  if (old) causes.push(...validateObjectMetaUpdate(namespace.metadata, old.metadata));
  return causes;
}

const NODE_CIDR_MESSAGE = 'node updates may not change podCIDR except from "" to valid';

function validateTaints(taints: NonNullable<Node['spec']>['taints'], field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  (taints ?? []).forEach((taint, i) => {
    const path = index(field, i);
    causes.push(...validateLabelName(taint.key ?? '', child(path, 'key')));
    const problems = isValidLabelValue(taint.value ?? '');
    if (problems.length) causes.push(invalid(child(path, 'value'), taint.value ?? '', problems.join(';')));
    causes.push(...validateTaintEffect(taint.effect, false, child(path, 'effect')));
    const id = `${taint.effect}\u0000${taint.key}`;
    if (seen.has(id)) {
      const printed = new GoLiteral(
        `core.Taint{Key:${goQuote(taint.key ?? '')}, Value:${goQuote(taint.value ?? '')}, Effect:${goQuote(taint.effect ?? '')}, TimeAdded:<nil>}`,
      );
      causes.push(duplicate(path, printed, 'taints must be unique by key and effect pair'));
    }
    seen.add(id);
  });
  return causes;
}

function validateResourceList(list: Record<string, string | number> | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const name of Object.keys(list ?? {}).sort()) {
    const quantity = list![name]!;
    if (parseQuantity(quantity) < 0) causes.push(invalid(child(field, name), String(quantity), NEGATIVE_MESSAGE));
  }
  return causes;
}

function validatePodCIDRs(cidrs: string[] | undefined): StatusCause[] {
  if (!cidrs?.length) return [];
  const causes: StatusCause[] = [];
  cidrs.forEach((cidr, i) => causes.push(...isValidCIDR(cidr).map((message) => invalid(index('spec.podCIDRs', i), cidr, message))));
  if (causes.length) return causes;
  const families = new Set(cidrs.map((c) => (c.includes(':') ? 6 : 4)));
  if (cidrs.length > 2 || (cidrs.length === 2 && families.size !== 2)) {
    causes.push(invalid('spec.podCIDRs', goStringSlice(cidrs), 'may specify no more than one CIDR for each IP family'));
  }
  return causes;
}

function validateNodeUpdate(node: Node, old: Node): StatusCause[] {
  const causes = validateObjectMetaUpdate(node.metadata, old.metadata);
  const seen = new Set<string>();
  (node.status?.addresses ?? []).forEach((address, i) => {
    const id = `${address.type}\u0000${address.address}`;
    if (seen.has(id)) {
      causes.push(
        duplicate(index('status.addresses', i), new GoLiteral(`core.NodeAddress{Type:${goQuote(address.type)}, Address:${goQuote(address.address)}}`)),
      );
    }
    seen.add(id);
  });
  const oldCIDRs = old.spec?.podCIDRs ?? [];
  const newCIDRs = node.spec?.podCIDRs ?? [];
  if (oldCIDRs.length > 0) {
    if (oldCIDRs.length !== newCIDRs.length) causes.push(forbidden('spec.podCIDRs', NODE_CIDR_MESSAGE));
    else oldCIDRs.forEach((cidr, i) => cidr !== newCIDRs[i] && causes.push(forbidden('spec.podCIDRs', NODE_CIDR_MESSAGE)));
  }
  const oldProvider = old.spec?.providerID ?? '';
  if (oldProvider && oldProvider !== (node.spec?.providerID ?? '')) {
    causes.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
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
