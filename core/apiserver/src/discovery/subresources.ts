import type { ResourceDefinition } from '@skiff/kernel';

export interface SubresourceInfo {
  group: string;
  version: string;
  kind: string;
  verbs: string[];
  /** The subresource reads its parent object and writes one part of it (status, finalize, ephemeralcontainers, resize). */
  part?: boolean;
}

/**
 * What discovery says about each subresource: the kind it speaks and its verbs (as kube-apiserver lists
 * them). kubectl drain looks for `pods/eviction`; `kubectl scale` uses `<resource>/scale`.
 */
const KNOWN: Record<string, (parent: ResourceDefinition) => SubresourceInfo> = {
  status: (parent) => ({ group: parent.group, version: parent.version, kind: parent.kind, verbs: ['get', 'patch', 'update'], part: true }),
  scale: () => ({ group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] }),
  binding: () => ({ group: '', version: 'v1', kind: 'Binding', verbs: ['create'] }),
  eviction: () => ({ group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] }),
  log: () => ({ group: '', version: 'v1', kind: 'Pod', verbs: ['get'] }),
  exec: () => ({ group: '', version: 'v1', kind: 'PodExecOptions', verbs: ['create', 'get'] }),
  attach: () => ({ group: '', version: 'v1', kind: 'PodAttachOptions', verbs: ['create', 'get'] }),
  portforward: () => ({ group: '', version: 'v1', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] }),
  proxy: (parent) => ({ group: '', version: 'v1', kind: `${parent.kind}ProxyOptions`, verbs: ['create', 'delete', 'get', 'patch', 'update'] }),
  ephemeralcontainers: (parent) => ({ group: parent.group, version: parent.version, kind: parent.kind, verbs: ['get', 'patch', 'update'], part: true }),
  resize: (parent) => ({ group: parent.group, version: parent.version, kind: parent.kind, verbs: ['get', 'patch', 'update'], part: true }),
  finalize: (parent) => ({ group: parent.group, version: parent.version, kind: parent.kind, verbs: ['update'], part: true }),
  approval: (parent) => ({ group: parent.group, version: parent.version, kind: parent.kind, verbs: ['get', 'patch', 'update'] }),
  token: () => ({ group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }),
};

export function subresourceInfo(parent: ResourceDefinition, subresource: string): SubresourceInfo {
  return KNOWN[subresource]?.(parent) ?? { group: parent.group, version: parent.version, kind: parent.kind, verbs: ['get'] };
}

export const DEFAULT_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function verbsOf(definition: ResourceDefinition): string[] {
  return definition.verbs ?? DEFAULT_VERBS;
}
