import { errors, qualifiedResource, type UserInfo } from '@skiff/api';
import { skipFailingTaps, type AuthzAttributes, type AuthzDecision, type Hooks, type PluginFailure } from '@skiff/kernel';
import { withPluginFailures } from './error-response.js';
import type { RequestInfo } from './request-info.js';

/** Failures of authorizers, per request, for the 500 when nobody else decides. */
const failures = new WeakMap<AuthzAttributes, PluginFailure[]>();

/**
 * Like Kubernetes' union authorizer, an authorizer that fails does not end the chain: a later allow or deny
 * still decides. Only when nobody decides does the failure answer, as a 500 naming the authorizer (Kubernetes
 * answers an authorizer error with an internal error, not a 403). The API server installs it once, when it is created.
 */
export function skipFailingAuthorizers(hook: Hooks['authorize']): void {
  skipFailingTaps(hook, (failure, [attributes]) => {
    failures.set(attributes, [...(failures.get(attributes) ?? []), failure]);
  });
}

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

/**
 * Runs the authorization chain; a deny, or nobody deciding, is a 403 worded like Kubernetes's — unless an
 * authorizer failed on the way and nobody decided, which is a 500 naming it.
 */
export async function authorize(hooks: Hooks, attributes: AuthzAttributes): Promise<void> {
  const decision = await hooks.authorize.promise(attributes);
  if (decision?.decision === 'allow') return;
  const failed = failures.get(attributes);
  if (!decision && failed) {
    const messages = failed.map((failure) => `authorizer "${failure.tapName}" failed: ${failure.detail}`);
    throw withPluginFailures(errors.internal(messages.length === 1 ? messages[0]! : `[${messages.join(', ')}]`), failed);
  }
  throw withPluginFailures(forbidden(attributes, decision), failed);
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
    { ...{}, ...(attributes.name ? { name: attributes.name } : {}), ...(attributes.apiGroup ? { group: attributes.apiGroup } : {}), kind: attributes.resource },
  );
}
