import { describe, expect, it } from 'vitest';
import type { Secret } from '@skiff/api';
import type { ImageAuth } from '@skiff/kernel';
import { imageRepository, keyMatches, keyringFromPullSecrets, locationKey, PullSecretError, RegistryKeyring } from './registry-keyring.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

function secret(name: string, type: string, data: Record<string, string>): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, type, data };
}

/** A kubernetes.io/dockerconfigjson secret with these `auths`, as `kubectl create secret docker-registry` makes it. */
const configJson = (name: string, auths: Record<string, unknown>) =>
  secret(name, 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64(JSON.stringify({ auths })) });

const login = (user: string, password = 'pw') => ({ username: user, password });

/** A keyring of one credential per location, the username naming it. */
function keyringOf(...locations: string[]): RegistryKeyring {
  const keyring = new RegistryKeyring();
  keyring.add(new Map(locations.map((location) => [location, login(location)])));
  return keyring;
}

const users = (auths: ImageAuth[]) => auths.map((auth) => auth.username);

describe('imageRepository', () => {
  it('normalises as Docker does: docker.io/library for official images, tag and digest dropped', () => {
    expect(imageRepository('nginx')).toBe('docker.io/library/nginx');
    expect(imageRepository('nginx:1.27')).toBe('docker.io/library/nginx');
    expect(imageRepository('me/app@sha256:abc')).toBe('docker.io/me/app');
    expect(imageRepository('docker.io/busybox')).toBe('docker.io/library/busybox');
    expect(imageRepository('index.docker.io/me/app:1')).toBe('docker.io/me/app');
    expect(imageRepository('127.0.0.1:5000/skiff/busybox:1')).toBe('127.0.0.1:5000/skiff/busybox');
    expect(imageRepository('localhost/app')).toBe('localhost/app');
    expect(imageRepository('registry.example.com/team/app:2@sha256:abc')).toBe('registry.example.com/team/app');
  });
});

describe('locationKey', () => {
  it('drops the scheme and treats /v1/ and /v2/ as the registry itself', () => {
    expect(locationKey('https://index.docker.io/v1/')).toBe('index.docker.io');
    expect(locationKey('http://registry.example.com:5000/v2/')).toBe('registry.example.com:5000');
    expect(locationKey('registry.example.com/')).toBe('registry.example.com');
    expect(locationKey('registry.example.com/team')).toBe('registry.example.com/team');
    expect(locationKey('https://registry.example.com/v2/team/')).toBe('registry.example.com/team/');
    expect(locationKey('registry.example.com:port')).toBeUndefined();
  });
});

describe('keyMatches', () => {
  it('wants the same host, the same port and a path prefix', () => {
    expect(keyMatches('registry.example.com', 'registry.example.com/team/app')).toBe(true);
    expect(keyMatches('registry.example.com', 'registry.example.com:5000/team/app')).toBe(false);
    expect(keyMatches('registry.example.com:5000', 'registry.example.com/team/app')).toBe(false);
    expect(keyMatches('registry.example.com:5000', 'registry.example.com:5000/team/app')).toBe(true);
    expect(keyMatches('127.0.0.1:5000', '127.0.0.1:5000/skiff/busybox')).toBe(true);
    expect(keyMatches('127.0.0.1:5000', '127.0.0.1:5001/skiff/busybox')).toBe(false);
    expect(keyMatches('example.com', 'registry.example.com/app')).toBe(false);
    expect(keyMatches('registry.example.com/team', 'registry.example.com/team/app')).toBe(true);
    expect(keyMatches('registry.example.com/team', 'registry.example.com/other/app')).toBe(false);
    // A plain string prefix, as upstream's keyring compares paths.
    expect(keyMatches('registry.example.com/team', 'registry.example.com/teamwork/app')).toBe(true);
  });

  it('matches globs part by part in the host, never across dots', () => {
    expect(keyMatches('*.example.com', 'registry.example.com/app')).toBe(true);
    expect(keyMatches('*.example.com', 'a.b.example.com/app')).toBe(false);
    expect(keyMatches('*.example.com', 'example.com/app')).toBe(false);
    expect(keyMatches('registry-[0-9].example.com', 'registry-7.example.com/app')).toBe(true);
    expect(keyMatches('registry-[^0-9].example.com', 'registry-7.example.com/app')).toBe(false);
    expect(keyMatches('registry-[.example.com', 'registry-[.example.com/app')).toBe(false);
    expect(keyMatches('registry.example.com', 'registryxexample.com/app')).toBe(false);
  });
});

describe('RegistryKeyring.lookup', () => {
  it('returns the most specific key first, then shorter prefixes, in the order credentials were added', () => {
    const keyring = new RegistryKeyring();
    keyring.add(new Map([['registry.example.com', login('host')]]));
    keyring.add(new Map([['registry.example.com/team', login('team')]]));
    keyring.add(new Map([['https://registry.example.com/v2/', login('host-again')]]));
    expect(users(keyring.lookup('registry.example.com/team/app:1'))).toEqual(['team', 'host', 'host-again']);
    expect(users(keyring.lookup('registry.example.com/other/app'))).toEqual(['host', 'host-again']);
    expect(keyring.lookup('quay.io/team/app')).toEqual([]);
  });

  it('takes docker.io, index.docker.io and https://index.docker.io/v1/ for Docker Hub images', () => {
    for (const location of ['docker.io', 'index.docker.io', 'https://index.docker.io/v1/']) {
      const keyring = keyringOf(location);
      for (const image of ['nginx', 'nginx:1.27', 'me/app:1', 'docker.io/me/app', 'index.docker.io/library/busybox'])
        expect({ location, image, users: users(keyring.lookup(image)) }).toEqual({ location, image, users: [location] });
      expect({ location, users: users(keyring.lookup('quay.io/me/app')) }).toEqual({ location, users: [] });
      expect({ location, users: users(keyring.lookup('localhost:5000/app')) }).toEqual({ location, users: [] });
    }
  });

  it('matches a registry with a port only on that port', () => {
    const keyring = keyringOf('127.0.0.1:5000');
    expect(users(keyring.lookup('127.0.0.1:5000/skiff/busybox:1'))).toEqual(['127.0.0.1:5000']);
    expect(keyring.lookup('127.0.0.1/skiff/busybox:1')).toEqual([]);
    expect(keyring.lookup('127.0.0.1:5001/skiff/busybox:1')).toEqual([]);
  });
});

describe('keyringFromPullSecrets', () => {
  it('reads kubernetes.io/dockerconfigjson auths: username and password, or auth (base64 user:password) over them', () => {
    const keyring = keyringFromPullSecrets([
      configJson('regcred', {
        '127.0.0.1:5000': { username: 'u', password: 'pw', email: 'u@example.com', auth: b64('u:pw') },
        'registry.example.com': { auth: b64('robot:pa:ss') },
        'quay.io': { username: 'q', password: 'qpw' },
        'unpadded.example.com': { auth: b64('ab:c').replace(/=+$/, '') },
      }),
    ]);
    expect(keyring.lookup('127.0.0.1:5000/skiff/busybox:1')).toEqual([{ username: 'u', password: 'pw' }]);
    expect(keyring.lookup('registry.example.com/app')).toEqual([{ username: 'robot', password: 'pa:ss' }]);
    expect(keyring.lookup('quay.io/app')).toEqual([{ username: 'q', password: 'qpw' }]);
    expect(keyring.lookup('unpadded.example.com/app')).toEqual([{ username: 'ab', password: 'c' }]);
  });

  it('reads kubernetes.io/dockercfg, whose .dockercfg is the registry map itself', () => {
    const dockercfg = secret('old', 'kubernetes.io/dockercfg', {
      '.dockercfg': b64(JSON.stringify({ 'https://index.docker.io/v1/': { auth: b64('hub:secret'), email: 'me@example.com' } })),
    });
    expect(keyringFromPullSecrets([dockercfg]).lookup('busybox')).toEqual([{ username: 'hub', password: 'secret' }]);
  });

  it('tries every secret that matches, in the order the pod lists them', () => {
    const keyring = keyringFromPullSecrets([
      configJson('first', { 'registry.example.com': login('one') }),
      configJson('second', { 'registry.example.com': login('two') }),
    ]);
    expect(users(keyring.lookup('registry.example.com/app'))).toEqual(['one', 'two']);
  });

  it('ignores secrets of other types, a config under the wrong key, and empty configs', () => {
    const keyring = keyringFromPullSecrets([
      secret('opaque', 'Opaque', { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'registry.example.com': login('opaque') } })) }),
      secret('mixed', 'kubernetes.io/dockercfg', { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'registry.example.com': login('mixed') } })) }),
      secret('empty', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': '' }),
      secret('no-auths', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{}') }),
      secret('null', 'kubernetes.io/dockercfg', { '.dockercfg': b64('null') }),
    ]);
    expect(keyring.lookup('registry.example.com/app')).toEqual([]);
  });

  it('fails with the secret and registry named when a config or an auth field cannot be read', () => {
    const failure = (data: Secret) => {
      try {
        keyringFromPullSecrets([data]);
        return 'no error';
      } catch (err) {
        expect(err).toBeInstanceOf(PullSecretError);
        return (err as Error).message;
      }
    };
    expect(failure(configJson('bad', { 'registry.example.com': { auth: 'not base64!' } }))).toBe(
      'pull secret "default/bad" .dockerconfigjson "registry.example.com".auth is not valid base64',
    );
    expect(failure(configJson('bad', { 'registry.example.com': { auth: 'dXNlcjpwdw=' } }))).toBe(
      'pull secret "default/bad" .dockerconfigjson "registry.example.com".auth is not valid base64',
    );
    expect(failure(configJson('bad', { 'registry.example.com': { auth: b64('no-colon') } }))).toBe(
      'pull secret "default/bad" .dockerconfigjson "registry.example.com".auth must be formatted as base64(username:password)',
    );
    expect(failure(configJson('bad', { 'registry.example.com': { username: 7 } }))).toBe(
      'pull secret "default/bad" .dockerconfigjson "registry.example.com".username is not a string',
    );
    expect(failure(secret('bad', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{"auths":') }))).toMatch(
      /^pull secret "default\/bad" \.dockerconfigjson is not valid JSON: /,
    );
    expect(failure(secret('bad', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{"auths":[]}') }))).toBe(
      'pull secret "default/bad" .dockerconfigjson auths is not an object of registries',
    );
    expect(failure(secret('bad', 'kubernetes.io/dockercfg', { '.dockercfg': b64('"text"') }))).toBe(
      'pull secret "default/bad" .dockercfg is not an object of registries',
    );
  });
});
