import type { UserInfo } from '@skiff/api';
import type { AuthnRequest, AuthnResult } from './types/apiserver.js';

/**
 * What a token authenticator makes of a token it recognises: the user, or why it refuses the token. It answers
 * undefined for a token it does not know, which another authenticator may.
 */
export type TokenAuthentication = { user: UserInfo } | { error: string };

/** The token of an `Authorization: Bearer <token>` header; undefined without one. */
export function bearerToken(request: AuthnRequest): string | undefined {
  const header = request.headers.authorization;
  return header && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
}

/**
 * The work of an `authenticate` tap for bearer tokens: the request's token goes to `authenticate`; the user it
 * names is the result, and why it refused a token it recognised goes to the request's errors (for the 401) while
 * the next authenticator still has its turn.
 */
export async function authenticateBearerToken(
  request: AuthnRequest,
  authenticate: (token: string) => Promise<TokenAuthentication | undefined> | TokenAuthentication | undefined,
): Promise<AuthnResult> {
  const token = bearerToken(request);
  if (token === undefined) return undefined;
  const result = await authenticate(token);
  if (!result) return undefined;
  if ('error' in result) {
    request.errors.push(result.error);
    return undefined;
  }
  return result;
}
