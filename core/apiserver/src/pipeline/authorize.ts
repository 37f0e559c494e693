import { errors, qualifiedResource, type UserInfo } from '@skiff/api';
import type { AuthzAttributes, AuthzDecision, Hooks } from '@skiff/kernel';
import type { RequestInfo } from './request-info.js';

export function authzAttributes(user: UserInfo, info: RequestInfo): AuthzAttributes {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    namespace: info.namespace,
    name: info.name,
    path: info.path,
  };
}

/** Runs the authorization chain; a deny, or nobody deciding, is a 403 worded like Kubernetes's. */
export async function authorize(hooks: Hooks, attributes: AuthzAttributes): Promise<void> {
  const decision = await hooks.authorize.promise(attributes);
  if (decision?.decision === 'allow') return;
  throw forbidden(attributes, decision);
}

export function forbidden(attributes: AuthzAttributes, decision: AuthzDecision) {
  const user = attributes.user.username;
  const why = decision?.reason ? `: ${decision.reason}` : '';
  if (!attributes.isResourceRequest) {
    return errors.forbidden(`forbidden: User "${user}" cannot ${attributes.verb} path "${attributes.path}"${why}`);
  }
  const resource = attributes.subresource ? `${attributes.resource}/${attributes.subresource}` : attributes.resource;
  const group = qualifiedResource(attributes.resource, attributes.apiGroup);
  const subject = attributes.name ? `${group} "${attributes.name}"` : group;
  const scope = attributes.namespace ? `in the namespace "${attributes.namespace}"` : 'at the cluster scope';
  return errors.forbidden(
    `${subject} is forbidden: User "${user}" cannot ${attributes.verb} resource "${resource}" in API group "${attributes.apiGroup}" ${scope}${why}`,
    { ...(attributes.name ? { name: attributes.name } : {}), ...(attributes.apiGroup ? { group: attributes.apiGroup } : {}), kind: attributes.resource },
  );
}
