import type { KubeObject, UserInfo } from '@skiff/api';
import type { AuthzAttributes, AuthzDecision } from '@skiff/kernel';
import { ruleAllows, type PolicyRule } from './rules.js';

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount' | string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  kind: 'Role' | 'ClusterRole' | string;
  name: string;
}

export interface RoleObject extends KubeObject {
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] }[] };
}

export interface BindingObject extends KubeObject {
  subjects?: Subject[] | null;
  roleRef: RoleRef;
}

/** Store keys of the four kinds, as the API server lays them out. */
export const RBAC_PREFIX = '/registry/rbac.authorization.k8s.io/';

interface IndexedBinding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  name: string;
  namespace: string;
  roleRef: RoleRef;
  /** The subject that made this entry (for the reason). */
  subject: Subject;
}

const userKey = (name: string) => `u\u0000${name}`;
const groupKey = (name: string) => `g\u0000${name}`;

function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return userKey(subject.name);
    case 'Group':
      return groupKey(subject.name);
    case 'ServiceAccount':
      return userKey(`system:serviceaccount:${subject.namespace || bindingNamespace}:${subject.name}`);
    default:
      return undefined;
  }
}

const MAX_CACHED_DECISIONS = 50_000;

/**
 * Roles, cluster roles and their bindings, indexed by subject so a decision looks at the bindings of the
 * user and its groups only. Decisions are cached per user, groups and request attributes, and the cache is dropped
 * whenever any RBAC object changes.
 */
export class RbacPolicy {
  private readonly clusterRoles = new Map<string, RoleObject>();
  private readonly roles = new Map<string, RoleObject>();
  private readonly clusterBindings = new Map<string, BindingObject>();
  private readonly roleBindings = new Map<string, BindingObject>();
  private clusterBySubject = new Map<string, IndexedBinding[]>();
  private namespacedBySubject = new Map<string, Map<string, IndexedBinding[]>>();
  private indexed = true;
  private decisions = new Map<string, AuthzDecision | null>();
  /** Bumped on every change; the aggregation controller and tests wait on it. */
  generation = 0;

  /** Applies one stored object (undefined: deleted) under its store key. */
  apply(key: string, object: KubeObject | undefined): void {
    const rest = key.slice(RBAC_PREFIX.length);
    const slash = rest.indexOf('/');
    const resource = rest.slice(0, slash);
    const name = rest.slice(slash + 1);
    const map =
      resource === 'clusterroles'
        ? this.clusterRoles
        : resource === 'roles'
          ? this.roles
          : resource === 'clusterrolebindings'
            ? this.clusterBindings
            : resource === 'rolebindings'
              ? this.roleBindings
              : undefined;
    if (!map) return;
    if (object) (map as Map<string, KubeObject>).set(name, object);
    else map.delete(name);
    if (resource.endsWith('bindings')) this.indexed = false;
    this.decisions = new Map();
    this.generation++;
  }

  /** The store keys of every object held. */
  keys(): string[] {
    const keys: string[] = [];
    for (const [resource, map] of [
      ['clusterroles', this.clusterRoles],
      ['roles', this.roles],
      ['clusterrolebindings', this.clusterBindings],
      ['rolebindings', this.roleBindings],
    ] as const)
      for (const name of map.keys()) keys.push(`${RBAC_PREFIX}${resource}/${name}`);
    return keys;
  }

  clusterRole(name: string): RoleObject | undefined {
    return this.clusterRoles.get(name);
  }

  role(namespace: string, name: string): RoleObject | undefined {
    return this.roles.get(`${namespace}/${name}`);
  }

  allClusterRoles(): IterableIterator<RoleObject> {
    return this.clusterRoles.values();
  }

  /** The authorize decision: allow with the binding that grants it, or no opinion. */
  authorize(attributes: AuthzAttributes): AuthzDecision {
    const { user } = attributes;
    const cacheKey = `${user.username}\u0000${user.groups.join('\u0001')}\u0000${attributes.verb}\u0000${attributes.apiGroup}\u0000${attributes.resource}\u0000${attributes.subresource}\u0000${attributes.namespace}\u0000${attributes.name}\u0000${attributes.path}`;
    const cached = this.decisions.get(cacheKey);
    if (cached !== undefined) return cached ?? undefined;
    const decision = this.decide(attributes);
    if (this.decisions.size >= MAX_CACHED_DECISIONS) this.decisions = new Map();
    this.decisions.set(cacheKey, decision ?? null);
    return decision;
  }

  /** Every rule `user` holds in `namespace` (cluster-wide ones included; '' for cluster-wide only). */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const rules: PolicyRule[] = [];
    for (const binding of this.bindingsFor(user, namespace)) rules.push(...this.rulesOf(binding.roleRef, binding.namespace));
    return rules;
  }

  private decide(attributes: AuthzAttributes): AuthzDecision {
    for (const binding of this.bindingsFor(attributes.user, attributes.namespace)) {
      const rules = this.rulesOf(binding.roleRef, binding.namespace);
      if (rules.some((rule) => ruleAllows(rule, attributes))) return { decision: 'allow', reason: reasonFor(binding) };
    }
    return undefined;
  }

  private *bindingsFor(user: UserInfo, namespace: string): Generator<IndexedBinding> {
    if (!this.indexed) this.reindex();
    const keys = [userKey(user.username), ...user.groups.map(groupKey)];
    for (const key of keys) yield* this.clusterBySubject.get(key) ?? [];
    if (!namespace) return;
    const inNamespace = this.namespacedBySubject.get(namespace);
    if (!inNamespace) return;
    for (const key of keys) yield* inNamespace.get(key) ?? [];
  }

  private rulesOf(ref: RoleRef, namespace: string): PolicyRule[] {
    const role = ref.kind === 'ClusterRole' ? this.clusterRoles.get(ref.name) : this.roles.get(`${namespace}/${ref.name}`);
    return role?.rules ?? [];
  }

  private reindex(): void {
    const cluster = new Map<string, IndexedBinding[]>();
    const namespaced = new Map<string, Map<string, IndexedBinding[]>>();
    const add = (map: Map<string, IndexedBinding[]>, key: string, entry: IndexedBinding) => {
      const list = map.get(key);
      if (list) list.push(entry);
      else map.set(key, [entry]);
    };
    for (const binding of this.clusterBindings.values()) {
      for (const subject of binding.subjects ?? []) {
        const key = subjectKey(subject, '');
        if (key) add(cluster, key, { kind: 'ClusterRoleBinding', name: binding.metadata.name ?? '', namespace: '', roleRef: binding.roleRef, subject });
      }
    }
    for (const binding of this.roleBindings.values()) {
      const namespace = binding.metadata.namespace ?? '';
      let map = namespaced.get(namespace);
      if (!map) namespaced.set(namespace, (map = new Map()));
      for (const subject of binding.subjects ?? []) {
        const key = subjectKey(subject, namespace);
        if (key) add(map, key, { kind: 'RoleBinding', name: binding.metadata.name ?? '', namespace, roleRef: binding.roleRef, subject });
      }
    }
    this.clusterBySubject = cluster;
    this.namespacedBySubject = namespaced;
    this.indexed = true;
  }
}

function reasonFor(binding: IndexedBinding): string {
  const subject =
    binding.subject.kind === 'ServiceAccount'
      ? `ServiceAccount "${binding.subject.name}/${binding.subject.namespace || binding.namespace}"`
      : `${binding.subject.kind} "${binding.subject.name}"`;
  const where = binding.kind === 'RoleBinding' ? `RoleBinding "${binding.name}/${binding.namespace}"` : `ClusterRoleBinding "${binding.name}"`;
  return `RBAC: allowed by ${where} of ${binding.roleRef.kind} "${binding.roleRef.name}" to ${subject}`;
}
