import { ApiError, type UserInfo } from '@skiff/api';
import type { ApiRequest, AuthnRequest, Hooks } from '@skiff/kernel';

/**
 * Runs the authentication chain. The first authenticator that recognises the request wins; when none
 * does, the reasons the others gave (an expired token, an unknown certificate) come back in the 401.
 */
export async function authenticate(hooks: Hooks, request: ApiRequest): Promise<UserInfo> {
  const authnRequest: AuthnRequest = {
    headers: request.headers,
    remoteAddress: request.remoteAddress,
    peerCertificates: request.peerCertificates,
    errors: [],
  };
  const result = await hooks.authenticate.promise(authnRequest);
  if (result?.user) return result.user;
  const reasons = authnRequest.errors;
  throw new ApiError('SKIFF_ERR_API_UNAUTHORIZED', reasons.length ? `Unauthorized: ${reasons.join('; ')}` : 'Unauthorized', reasons.length ? { causes: reasons.map((message) => ({ reason: 'Unauthorized', message })) } : undefined);
}
