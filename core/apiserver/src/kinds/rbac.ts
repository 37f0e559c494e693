// rbac.authorization.k8s.io/v1: roles, cluster roles and their bindings.
import {
  defineKind,
  pathSegmentErrors,
  RESOURCES,
  type ClusterRole,
  type ClusterRoleBinding,
  type PolicyRule,
  type RbacV1Subject,
  type ResourceDefinition,
  type Role,
  type RoleBinding,
  type StatusCause,
} from '@skiff/api';
import { fieldErrors, GoLiteral, isDNS1123Subdomain, validateLabelSelector } from '@skiff/api/validation';
import { AGE_COLUMN, column, computed } from './columns.js';

const RBAC_GROUP = RESOURCES.roles.group;

/** Role bindings and cluster role bindings have the same shape; cluster ones may only refer to cluster roles. */
type Binding = RoleBinding | ClusterRoleBinding;

const nonEmpty = (values: unknown[] | undefined): boolean => (values?.length ?? 0) > 0;

function validateRules(rules: PolicyRule[] | undefined, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  (rules ?? []).forEach((rule, i) => {
    const path = `rules[${i}]`;
    if (!nonEmpty(rule.verbs)) causes.push(fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value'));
    if (nonEmpty(rule.nonResourceURLs)) {
      if (namespaced) causes.push(fieldErrors.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
      if (nonEmpty(rule.apiGroups) || nonEmpty(rule.resources) || nonEmpty(rule.resourceNames)) {
        causes.push(fieldErrors.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (!nonEmpty(rule.apiGroups)) causes.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
    if (!nonEmpty(rule.resources)) causes.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  });
  return causes;
}

/** Subjects and the role reference name the API group their kind lives in when the manifest leaves it out. */
function defaultBinding(binding: Binding): void {
  if (binding.roleRef && !binding.roleRef.apiGroup) binding.roleRef.apiGroup = RBAC_GROUP;
  for (const subject of binding.subjects ?? []) {
    if (subject.apiGroup) continue;
    if (subject.kind === 'ServiceAccount') subject.apiGroup = '';
    else if (subject.kind === 'User' || subject.kind === 'Group') subject.apiGroup = RBAC_GROUP;
  }
}

function validateSubject(subject: RbacV1Subject, path: string, namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!subject.name) causes.push(fieldErrors.required(`${path}.name`));
  switch (subject.kind) {
    case 'ServiceAccount':
      if (subject.name) causes.push(...isDNS1123Subdomain(subject.name).map((message) => fieldErrors.invalid(`${path}.name`, subject.name, message)));
      if (subject.apiGroup) causes.push(fieldErrors.notSupported(`${path}.apiGroup`, subject.apiGroup, ['']));
      if (!namespaced && !subject.namespace) causes.push(fieldErrors.required(`${path}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (subject.apiGroup !== RBAC_GROUP) causes.push(fieldErrors.notSupported(`${path}.apiGroup`, subject.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      causes.push(fieldErrors.notSupported(`${path}.kind`, subject.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return causes;
}

function validateBinding(binding: Binding, old: Binding | undefined, roleKinds: string[], namespaced: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const ref = binding.roleRef ?? {};
  if (ref.apiGroup !== RBAC_GROUP) causes.push(fieldErrors.notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  if (!roleKinds.includes(ref.kind ?? '')) causes.push(fieldErrors.notSupported('roleRef.kind', ref.kind ?? '', roleKinds));
  if (!ref.name) causes.push(fieldErrors.required('roleRef.name'));
  else causes.push(...pathSegmentErrors(ref.name).map((message) => fieldErrors.invalid('roleRef.name', ref.name, message)));
  (binding.subjects ?? []).forEach((subject, i) => causes.push(...validateSubject(subject, `subjects[${i}]`, namespaced)));
  if (old) {
    const was = old.roleRef ?? {};
    if (ref.apiGroup !== was.apiGroup || ref.kind !== was.kind || ref.name !== was.name) {
      const printed = new GoLiteral(
        `rbac.RoleRef{APIGroup:${JSON.stringify(ref.apiGroup ?? '')}, Kind:${JSON.stringify(ref.kind ?? '')}, Name:${JSON.stringify(ref.name ?? '')}}`,
      );
      causes.push(fieldErrors.invalid('roleRef', printed, 'cannot change roleRef'));
    }
  }
  return causes;
}

/** Users, Groups and ServiceAccounts (`namespace/name`) among a binding's subjects, as `-o wide` lists them. */
function subjectNames(binding: Binding, kind: 'User' | 'Group' | 'ServiceAccount'): string {
  return (binding.subjects ?? [])
    .filter((subject) => subject.kind === kind)
    .map((subject) => (kind === 'ServiceAccount' ? `${subject.namespace ?? ''}/${subject.name ?? ''}` : (subject.name ?? '')))
    .join(', ');
}

const CREATED_AT = column('Created At', '.metadata.creationTimestamp', { type: 'date' });

// Cluster role bindings print their ClusterRole in the same Role column.
const BINDING_COLUMNS = [
  computed<Binding>('Role', (binding) => `${binding.roleRef?.kind ?? ''}/${binding.roleRef?.name ?? ''}`),
  AGE_COLUMN,
  computed<Binding>('Users', (binding) => subjectNames(binding, 'User'), { priority: 1 }),
  computed<Binding>('Groups', (binding) => subjectNames(binding, 'Group'), { priority: 1 }),
  computed<Binding>('ServiceAccounts', (binding) => subjectNames(binding, 'ServiceAccount'), { priority: 1 }),
];

export const roles = defineKind<Role>({
  ...{},
  ...RESOURCES.roles,
  names: 'path-segment',
  columns: [CREATED_AT],
  strategy: { validate: (role) => validateRules(role.rules, true) },
});

export const clusterRoles = defineKind<ClusterRole>({
  ...{},
  ...RESOURCES.clusterroles,
  names: 'path-segment',
  columns: [CREATED_AT],
  strategy: {
    validate(role) {
      const causes = validateRules(role.rules, false);
      if (role.aggregationRule) {
        const selectors = role.aggregationRule.clusterRoleSelectors ?? [];
        if (selectors.length === 0) {
          causes.push(fieldErrors.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
        }
        selectors.forEach((selector, i) => causes.push(...validateLabelSelector(selector, `aggregationRule.clusterRoleSelectors[${i}]`)));
      }
      return causes;
    },
  },
});

export const roleBindings = defineKind<RoleBinding>({
  ...{},
  ...RESOURCES.rolebindings,
  names: 'path-segment',
  columns: BINDING_COLUMNS,
  strategy: {
    defaults: defaultBinding,
    validate: (binding, old) => validateBinding(binding, old, ['Role', 'ClusterRole'], true),
  },
});

export const clusterRoleBindings = defineKind<ClusterRoleBinding>({
  ...{},
  ...RESOURCES.clusterrolebindings,
  names: 'path-segment',
  columns: BINDING_COLUMNS,
  strategy: {
    defaults: defaultBinding,
    validate: (binding, old) => validateBinding(binding, old, ['ClusterRole'], false),
  },
});

export const RBAC_KINDS: ResourceDefinition[] = [clusterRoleBindings, clusterRoles, roleBindings, roles];
