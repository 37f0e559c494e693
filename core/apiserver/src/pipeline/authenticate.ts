import { ApiError, type UserInfo } from '@skiff/api';
import { skipFailingTaps, type ApiRequest, type AuthnRequest, type Hooks, type PluginFailure } from '@skiff/kernel';
import { withPluginFailures } from './error-response.js';

/** Who wants to learn whom a request turned out to be (the HTTPS server, to trust the connection). */
const authenticatedListeners = new WeakMap<ApiRequest, (user: UserInfo) => void>();

/** Calls `listener` with the user once `request` has authenticated (anonymous included); not at all on a 401. */
export function onAuthenticated(request: ApiRequest, listener: (user: UserInfo) => void): void {
  authenticatedListeners.set(request, listener);
}

/** Failures of authenticators, per request, for the log of a request that ends up rejected. */
const failures = new WeakMap<AuthnRequest, PluginFailure[]>();

/**
 * Like Kubernetes' union authenticator, an authenticator that fails does not end the chain: the next one
 * gets its turn, and the failure only counts (named in the 401, logged) when nobody recognises the request.
 * The API server installs it once, when it is created.
 */
export function skipFailingAuthenticators(hook: Hooks['authenticate']): void {
  skipFailingTaps(hook, (failure, [request]) => {
    request.errors.push(`authenticator "${failure.tapName}" failed: ${failure.detail}`);
    failures.set(request, [...(failures.get(request) ?? []), failure]);
  });
}

/**
 * Runs the authentication chain. The first authenticator that recognises the request wins; when none
 * does, the reasons the others gave (an expired token, an unknown certificate, an authenticator that
 * failed) come back in the 401.
 */
export async function authenticate(hooks: Hooks, request: ApiRequest): Promise<UserInfo> {
  const authnRequest: AuthnRequest = {
    headers: request.headers,
    remoteAddress: request.remoteAddress,
    peerCertificates: request.peerCertificates,
    errors: [],
  };
  const result = await hooks.authenticate.promise(authnRequest);
  if (result?.user) {
    authenticatedListeners.get(request)?.(result.user);
    return result.user;
  }
  const reasons = authnRequest.errors;
  const unauthorized = new ApiError(
    'SKIFF_ERR_API_UNAUTHORIZED',
    reasons.length ? `Unauthorized: ${reasons.join('; ')}` : 'Unauthorized',
    reasons.length ? { causes: reasons.map((message) => ({ reason: 'Unauthorized', message })) } : undefined,
  );
  throw withPluginFailures(unauthorized, failures.get(authnRequest));
}
