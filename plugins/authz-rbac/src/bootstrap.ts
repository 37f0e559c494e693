import { RESOURCES, type KubeObject } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import BOOTSTRAP from './generated/bootstrap-policy.json' with { type: 'json' };
import type { BindingObject, RoleObject, Subject } from './policy.js';
import type { PolicyRule } from './rules.js';

const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const BOOTSTRAPPING = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

/** Skiff's controller manager runs every controller as one identity; this role holds what upstream gives them one by one. */
export const CONTROLLER_MANAGER_ROLE = 'skiff:kube-controller-manager:controllers';
export const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';
/** The role metrics-server's manifest installs upstream, aggregated into view, edit and admin. */
export const METRICS_READER_ROLE = 'system:aggregated-metrics-reader';

/** The default objects: upstream's bootstrap policy, plus the role and binding of Skiff's single-identity controller manager. */
export function defaultPolicy(): { clusterRoles: RoleObject[]; clusterRoleBindings: BindingObject[]; roles: RoleObject[]; roleBindings: BindingObject[] } {
  const clusterRoles = structuredClone(BOOTSTRAP.clusterRoles) as unknown as RoleObject[];
  // Upstream's controller roles, the volume provisioner's (Skiff's host-path provisioner runs in the controller
  // manager), and the default StorageClass that provisioner writes.
  const controllerRules = [
    ...clusterRoles
      .filter((role) => role.metadata.name!.startsWith('system:controller:') || role.metadata.name === 'system:persistent-volume-provisioner')
      .flatMap((role) => role.rules ?? []),
    { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
  ];
  // Upstream's policy of v1.28 predates ServiceCIDRs; since they are GA (v1.33) kube-proxy reads them to refuse unheld
  // addresses of the service ranges, and so does Skiff's service proxy.
  clusterRoles
    .find((role) => role.metadata.name === 'system:node-proxier')
    ?.rules?.push({ apiGroups: ['networking.k8s.io'], resources: ['servicecidrs'], verbs: ['list', 'watch'] });
  const metadata = (name: string) => ({ name, labels: { ...BOOTSTRAPPING }, annotations: { [AUTOUPDATE]: 'true' } });
  clusterRoles.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: metadata(CONTROLLER_MANAGER_ROLE), rules: controllerRules });
  // What a cluster with metrics-server has (its own manifest installs it): whoever may view pods may see their usage
  // (kubectl top, autoscalers' readers). Skiff's presets serve metrics.k8s.io with @skiff/plugin-metrics-server.
  const reader = metadata(METRICS_READER_ROLE);
  clusterRoles.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      ...{},
      ...reader,
      labels: {
        ...{},
        ...reader.labels,
        ...Object.fromEntries(['view', 'edit', 'admin'].map((to) => [`rbac.authorization.k8s.io/aggregate-to-${to}`, 'true'])),
      },
    },
    rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
  });
  const clusterRoleBindings = structuredClone(BOOTSTRAP.clusterRoleBindings) as unknown as BindingObject[];
  clusterRoleBindings.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: metadata(CONTROLLER_MANAGER_ROLE),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: CONTROLLER_MANAGER_ROLE } as BindingObject['roleRef'],
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: CONTROLLER_MANAGER_USER }],
  });
  return {
    clusterRoles,
    clusterRoleBindings,
    roles: structuredClone(BOOTSTRAP.roles) as unknown as RoleObject[],
    roleBindings: structuredClone(BOOTSTRAP.roleBindings) as unknown as BindingObject[],
  };
}

const ruleKey = (rule: PolicyRule) => JSON.stringify([rule.verbs, rule.apiGroups, rule.resources, rule.resourceNames, rule.nonResourceURLs]);
const subjectKey = (subject: Subject) => `${subject.kind}/${subject.namespace ?? ''}/${subject.name}`;
const isNotFound = (err: unknown) => (err as { status?: number; code?: number })?.status === 404 || (err as { code?: number })?.code === 404;

/**
 * Reconciles the defaults the way kube-apiserver does at start: missing objects are created; existing ones that keep
 * `rbac.authorization.kubernetes.io/autoupdate: "true"` get the rules (roles) or subjects (bindings) they lack; any
 * other is left as its owner changed it. Returns the highest resourceVersion written (0: nothing written).
 */
export async function reconcileDefaults(client: ApiClient): Promise<number> {
  const policy = defaultPolicy();
  let written = 0;
  const note = (object: KubeObject) => (written = Math.max(written, Number(object.metadata.resourceVersion ?? 0)));
  const reconcile = async <T extends KubeObject>(
    type: (typeof RESOURCES)[keyof typeof RESOURCES],
    wanted: T,
    merge: (current: T, wanted: T) => T | undefined,
  ) => {
    const namespace = wanted.metadata.namespace;
    let current: T | undefined;
    try {
      current = await client.get<T>(type, wanted.metadata.name!, namespace);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!current) return note(await client.create(type, wanted, namespace));
    if (current.metadata.annotations?.[AUTOUPDATE] === 'false') return;
    const merged = merge(current, wanted);
    if (merged) note(await client.update(type, merged));
  };
  const mergeRules = (current: RoleObject, wanted: RoleObject): RoleObject | undefined => {
    const have = new Set((current.rules ?? []).map(ruleKey));
    const missing = (wanted.rules ?? []).filter((rule) => !have.has(ruleKey(rule)));
    const aggregation = wanted.aggregationRule && JSON.stringify(current.aggregationRule) !== JSON.stringify(wanted.aggregationRule);
    if (missing.length === 0 && !aggregation) return undefined;
    // Aggregated roles get their rules from the aggregation controller; only their selectors are reconciled.
    return { ...{}, ...current, ...(wanted.aggregationRule ? { aggregationRule: wanted.aggregationRule } : { rules: [...(current.rules ?? []), ...missing] }) };
  };
  const mergeSubjects = (current: BindingObject, wanted: BindingObject): BindingObject | undefined => {
    const have = new Set((current.subjects ?? []).map(subjectKey));
    const missing = (wanted.subjects ?? []).filter((subject) => !have.has(subjectKey(subject)));
    return missing.length ? { ...{}, ...current, subjects: [...(current.subjects ?? []), ...missing] } : undefined;
  };
  for (const role of policy.clusterRoles) await reconcile(RESOURCES.clusterroles, role, mergeRules);
  for (const binding of policy.clusterRoleBindings) await reconcile(RESOURCES.clusterrolebindings, binding, mergeSubjects);
  for (const role of policy.roles) await reconcile(RESOURCES.roles, role, mergeRules);
  for (const binding of policy.roleBindings) await reconcile(RESOURCES.rolebindings, binding, mergeSubjects);
  return written;
}
