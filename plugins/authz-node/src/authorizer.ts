import type { UserInfo } from '@skiff/api';
import type { AuthzAttributes, AuthzDecision } from '@skiff/kernel';
import type { NodeGraph } from './graph.js';
import type { ReferencedKind } from './references.js';
import { nodeRulesAllow } from './rules.js';

export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/** The node a user is, when it is one: `system:node:<name>` in the group `system:nodes`. */
export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX) || !user.groups?.includes(NODES_GROUP)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length) || undefined;
}

/** Reads the truth from the store when the graph has no edge (it may lag the store by a watch event). */
export type Recheck = (node: string, kind: ReferencedKind | 'persistentvolumes', namespace: string, name: string) => Promise<boolean>;

const GRAPH_KINDS = new Set<string>(['secrets', 'configmaps', 'persistentvolumeclaims', 'persistentvolumes']);

const deny = (reason: string): AuthzDecision => ({ decision: 'deny', reason });

/** The Node authorizer's decision; undefined (no opinion) for anyone but a node, and for what it has no rule about. */
export function authorizeNode(attributes: AuthzAttributes, graph: NodeGraph, recheck: Recheck): AuthzDecision | Promise<AuthzDecision> {
  const node = nodeNameOf(attributes.user);
  if (!node || !attributes.isResourceRequest) return undefined;
  const { apiGroup, resource, subresource, verb, namespace, name } = attributes;

  const related = (kind: ReferencedKind | 'persistentvolumes'): AuthzDecision | Promise<AuthzDecision> => {
    const noRelationship = deny(`no relationship found between node '${node}' and this object`);
    if (graph.related(node, kind, namespace, name)) return { decision: 'allow' };
    return recheck(node, kind, namespace, name).then((found) => (found ? { decision: 'allow' } : noRelationship));
  };

  if (apiGroup === '' && GRAPH_KINDS.has(resource)) {
    const kind = resource as ReferencedKind | 'persistentvolumes';
    if (subresource === 'status' && kind === 'persistentvolumeclaims') {
      if (verb !== 'update' && verb !== 'patch') return deny('can only get, update or patch the status of individual claims');
      return related(kind);
    }
    if (verb !== 'get' && verb !== 'list' && verb !== 'watch') return deny('can only read resources of this type');
    if (subresource) return deny('cannot read subresource');
    // A list or watch would need a field selector on the name to be safe; only single reads are allowed.
    if (verb !== 'get' || !name) return deny('can only get individual resources of this type');
    return related(kind);
  }
  if (apiGroup === '' && resource === 'serviceaccounts') {
    if (subresource !== 'token') return undefined;
    if (verb !== 'create' || !name) return deny('can only create tokens for individual service accounts');
    return related('serviceaccounts');
  }
  return nodeRulesAllow(attributes) ? { decision: 'allow' } : undefined;
}
