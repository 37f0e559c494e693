import { errors } from '@skiff/api';
import { AdmissionError, type AdmissionRequest, type AuthzAttributes, type Hooks } from '@skiff/kernel';
import type { BindingObject, RbacPolicy, RoleObject } from './policy.js';
import { describeRule, uncoveredRules, type PolicyRule } from './rules.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const PRIVILEGED_GROUP = 'system:masters';

/**
 * Nobody grants what they do not hold: a Role or ClusterRole written with rules its author lacks needs `escalate` on
 * it, and a binding to a role whose rules its author lacks needs `bind` on that role — as kube-apiserver's RBAC
 * storage checks. Members of system:masters pass.
 */
export async function checkEscalation(request: AdmissionRequest, policy: RbacPolicy, hooks: Hooks): Promise<void> {
  if (request.resource.group !== RBAC_GROUP || request.subresource || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) return;
  const { user } = request;
  if (user.groups.includes(PRIVILEGED_GROUP)) return;
  const resource = request.resource.resource;
  const allowedTo = async (verb: string, target: string, name: string, namespace: string) => {
    const attributes: AuthzAttributes = {
      user,
      verb,
      isResourceRequest: true,
      apiGroup: RBAC_GROUP,
      apiVersion: 'v1',
      resource: target,
      subresource: '',
      namespace,
      name,
      path: '',
    };
    return (await hooks.authorize.promise(attributes))?.decision === 'allow';
  };
  let requested: PolicyRule[];
  let namespace: string;
  if (resource === 'roles' || resource === 'clusterroles') {
    const role = request.object as RoleObject;
    namespace = resource === 'roles' ? request.namespace : '';
    if (await allowedTo('escalate', resource, request.name, namespace)) return;
    const previous = (request.oldObject as RoleObject | undefined)?.aggregationRule;
    if (resource === 'clusterroles' && role.aggregationRule && JSON.stringify(role.aggregationRule) !== JSON.stringify(previous))
      throw new AdmissionError(`clusterroles.${RBAC_GROUP} "${request.name}" is forbidden: must have cluster-admin privileges to use the aggregationRule`);
    requested = role.rules ?? [];
  } else if (resource === 'rolebindings' || resource === 'clusterrolebindings') {
    const binding = request.object as BindingObject;
    namespace = resource === 'rolebindings' ? request.namespace : '';
    const target = binding.roleRef.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
    if (await allowedTo('bind', target, binding.roleRef.name, namespace)) return;
    const role = target === 'clusterroles' ? policy.clusterRole(binding.roleRef.name) : policy.role(namespace, binding.roleRef.name);
    // What a missing role would grant cannot be checked: upstream answers that the role is not found.
    if (!role) throw errors.notFound(target, RBAC_GROUP, binding.roleRef.name);
    requested = role.rules ?? [];
  } else {
    return;
  }
  const missing = uncoveredRules(policy.rulesFor(user, namespace), requested);
  if (missing.length === 0) return;
  const groups = user.groups.map((group) => JSON.stringify(group)).join(' ');
  throw new AdmissionError(
    `${resource}.${RBAC_GROUP} "${request.name}" is forbidden: user "${user.username}" (groups=[${groups}]) is attempting to grant RBAC permissions not currently held:\n${missing.map(describeRule).join('\n')}`,
  );
}
