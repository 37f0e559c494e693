import { NODE_RESTRICTION_LABEL_PREFIX } from './names.js';

/** The labels a kubelet sets on its Node itself (kubelet's well-known labels). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
]);
/** Prefixes (with their subdomains) kubelets may use freely. */
const KUBELET_PREFIXES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
const RESERVED_PREFIXES = ['kubernetes.io', 'k8s.io'];

const prefixOf = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const within = (prefix: string, domain: string) => prefix === domain || prefix.endsWith(`.${domain}`);

/**
 * Whether a node may not set or change this label on itself: anything under node-restriction.kubernetes.io (what
 * administrators use to steer workloads to trusted nodes), and any other kubernetes.io or k8s.io label that is not
 * one of the kubelet's own.
 */
export function forbiddenForNodes(key: string): boolean {
  const prefix = prefixOf(key);
  if (within(prefix, NODE_RESTRICTION_LABEL_PREFIX)) return true;
  if (!RESERVED_PREFIXES.some((domain) => within(prefix, domain))) return false;
  return !KUBELET_LABELS.has(key) && !KUBELET_PREFIXES.some((domain) => within(prefix, domain));
}

/** Labels added, removed or changed between `before` and `after`, that a node may not touch, sorted. */
export function forbiddenChanges(after: Record<string, string> = {}, before: Record<string, string> = {}): string[] {
  const changed = new Set<string>();
  for (const [key, value] of Object.entries(after)) if (before[key] !== value) changed.add(key);
  for (const key of Object.keys(before)) if (!(key in after)) changed.add(key);
  return [...changed].filter(forbiddenForNodes).sort();
}
