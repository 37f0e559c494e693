import type { AuthzAttributes } from '@skiff/kernel';

/** A rule of what every node may do whatever its pods: an API group, resources (`resource/subresource`), verbs. */
export interface NodeRule {
  group: string;
  resources: string[];
  verbs: string[];
}

const READ = ['get', 'list', 'watch'];

/**
 * What a kubelet needs regardless of its pods, as upstream's `system:node` ClusterRole grants it, plus the
 * self-reviews every authenticated user has (upstream's `system:basic-user`), so a node works without RBAC.
 * Secrets, ConfigMaps, claims, volumes and ServiceAccount tokens are not here: the graph decides those.
 */
export const NODE_RULES: readonly NodeRule[] = [
  { group: '', resources: ['nodes'], verbs: [...READ, 'create', 'update', 'patch', 'delete'] },
  { group: '', resources: ['nodes/status'], verbs: ['patch', 'update'] },
  { group: '', resources: ['pods'], verbs: [...READ, 'create', 'delete'] },
  { group: '', resources: ['pods/status'], verbs: ['update', 'patch'] },
  { group: '', resources: ['pods/eviction'], verbs: ['create'] },
  { group: '', resources: ['services', 'endpoints'], verbs: READ },
  // Beyond upstream's role: a joined node's service proxy acts with the node's credentials (upstream runs kube-proxy
  // under a ServiceAccount of its own). EndpointSlices say no more than the Endpoints a node reads already.
  { group: 'discovery.k8s.io', resources: ['endpointslices'], verbs: READ },
  { group: '', resources: ['events'], verbs: ['create', 'patch', 'update'] },
  { group: 'events.k8s.io', resources: ['events'], verbs: ['create', 'patch', 'update'] },
  { group: 'coordination.k8s.io', resources: ['leases'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
  { group: 'storage.k8s.io', resources: ['csinodes', 'csidrivers', 'storageclasses', 'volumeattachments'], verbs: READ },
  { group: 'node.k8s.io', resources: ['runtimeclasses'], verbs: READ },
  { group: 'authentication.k8s.io', resources: ['tokenreviews', 'selfsubjectreviews'], verbs: ['create'] },
  {
    group: 'authorization.k8s.io',
    resources: ['subjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    verbs: ['create'],
  },
  { group: 'certificates.k8s.io', resources: ['certificatesigningrequests'], verbs: ['create', ...READ] },
];

const index = new Map<string, Set<string>>();
for (const rule of NODE_RULES) for (const resource of rule.resources) index.set(`${rule.group}/${resource}`, new Set(rule.verbs));

/** Whether the node rules allow a resource request. */
export function nodeRulesAllow(attributes: AuthzAttributes): boolean {
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  return index.get(`${attributes.apiGroup}/${resource}`)?.has(attributes.verb) ?? false;
}
