import { describe, expect, it } from 'vitest';
import { CHAIN_STAGE, Kernel, type AuthnRequest } from '@skiff/kernel';
import plugin from './index.js';

const ANONYMOUS = { user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } };

function request(headers: Record<string, string> = {}, peerCertificates?: Buffer[]): AuthnRequest {
  return { headers, remoteAddress: '127.0.0.1', peerCertificates, errors: [] };
}

/** A kernel with this plugin and a bearer-token authenticator that knows one token, tapped at its usual stage. */
function kernelWithTokens(): Kernel {
  const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
  kernel.hooks.authenticate.tap({ name: 'tokens', stage: CHAIN_STAGE.TOKEN }, (authn) => {
    const header = authn.headers.authorization;
    if (!header?.startsWith('Bearer ')) return undefined;
    if (header === 'Bearer good') return { user: { username: 'alice', groups: ['system:authenticated'] } };
    authn.errors.push('invalid bearer token');
    return undefined;
  });
  return kernel;
}

describe('authn-anonymous', () => {
  it('authenticates a request without credentials as system:anonymous in system:unauthenticated', async () => {
    expect(await kernelWithTokens().hooks.authenticate.promise(request())).toEqual(ANONYMOUS);
  });

  it('lets a real authenticator go first', async () => {
    expect(await kernelWithTokens().hooks.authenticate.promise(request({ authorization: 'Bearer good' }))).toEqual({
      user: { username: 'alice', groups: ['system:authenticated'] },
    });
  });

  it('leaves a request with rejected credentials unauthenticated, so it stays a 401', async () => {
    const rejected = request({ authorization: 'Bearer wrong' });
    expect(await kernelWithTokens().hooks.authenticate.promise(rejected)).toBeUndefined();
    expect(rejected.errors).toEqual(['invalid bearer token']);
  });

  it('never treats credentials nobody understood as anonymous', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    expect(await kernel.hooks.authenticate.promise(request({ authorization: 'Basic YWxpY2U6c2VjcmV0' }))).toBeUndefined();
    expect(await kernel.hooks.authenticate.promise(request({}, [Buffer.from('a client certificate')]))).toBeUndefined();
  });

  it('hands out a fresh user each time', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    const first = await kernel.hooks.authenticate.promise(request());
    first!.user.groups.push('system:masters');
    expect(await kernel.hooks.authenticate.promise(request())).toEqual(ANONYMOUS);
  });

  it('takes no options', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { username: 'guest' })).toThrow(
      'plugin "@skiff/plugin-authn-anonymous": unknown option "username" (this plugin takes no options)',
    );
  });
});
