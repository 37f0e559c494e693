import { describe, expect, it } from 'vitest';
import type { AuthnRequest } from './types/apiserver.js';
import { authenticateBearerToken, bearerToken } from './bearer-token.js';

const request = (authorization?: string): AuthnRequest => ({ headers: { authorization }, errors: [] });
const alice = { user: { username: 'alice', groups: ['system:authenticated'] } };

describe('bearer tokens', () => {
  it('reads the token of an Authorization: Bearer header, whatever the scheme’s case', () => {
    expect(bearerToken(request('Bearer abc '))).toBe('abc');
    expect(bearerToken(request('bearer abc'))).toBe('abc');
    expect(bearerToken(request('Basic YWxpY2U6cHc='))).toBeUndefined();
    expect(bearerToken(request())).toBeUndefined();
  });

  it('answers the user the authenticator names; a refusal goes to the errors and passes on', async () => {
    expect(await authenticateBearerToken(request('Bearer good'), async (token) => (token === 'good' ? alice : undefined))).toEqual(alice);
    const refused = request('Bearer stale');
    expect(await authenticateBearerToken(refused, () => ({ error: 'token has expired' }))).toBeUndefined();
    expect(refused.errors).toEqual(['token has expired']);
    const unknown = request('Bearer other');
    expect(await authenticateBearerToken(unknown, () => undefined)).toBeUndefined();
    expect(unknown.errors).toEqual([]);
  });

  it('does not ask the authenticator without a bearer token', async () => {
    let asked = false;
    const answer = await authenticateBearerToken(request('Basic x'), () => {
      asked = true;
      return alice;
    });
    expect(answer).toBeUndefined();
    expect(asked).toBe(false);
  });
});
