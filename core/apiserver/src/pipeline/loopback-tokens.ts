import { randomBytes } from 'node:crypto';
import type { UserInfo } from '@skiff/api';
import type { AuthnRequest, AuthnResult } from '@skiff/kernel';

/**
 * Bearer tokens for in-process clients. They never leave the process (they are random and kept in memory
 * only), and the API server's own authenticator maps them back to the user they were issued for.
 */
export class LoopbackTokens {
  private readonly users = new Map<string, UserInfo>();

  issue(user: UserInfo): string {
    const token = `skiff-loopback.${randomBytes(32).toString('base64url')}`;
    this.users.set(token, structuredClone(user));
    return token;
  }

  /** The authenticate tap: recognises only loopback tokens and passes on everything else. */
  authenticate(request: AuthnRequest): AuthnResult {
    const header = request.headers.authorization;
    if (!header || header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
    const user = this.users.get(header.slice(7).trim());
    return user ? { user } : undefined;
  }
}
