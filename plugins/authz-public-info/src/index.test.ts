import { describe, expect, it } from 'vitest';
import { Kernel, type AuthzAttributes } from '@skiff/kernel';
import plugin from './index.js';
import { pathMatcher } from './paths.js';

const anonymous = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
const alice = { username: 'alice', groups: ['system:authenticated'] };

function nonResource(path: string, verb = 'get', user = anonymous): AuthzAttributes {
  return { user, verb, isResourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path };
}

const listNamespaces: AuthzAttributes = {
  user: anonymous,
  verb: 'list',
  isResourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'namespaces',
  subresource: '',
  namespace: '',
  name: '',
  path: '/api/v1/namespaces',
};

function kernel(options?: Record<string, unknown>): Kernel {
  return new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);
}

async function decide(k: Kernel, attributes: AuthzAttributes) {
  return (await k.hooks.authorize.promise(attributes))?.decision;
}

describe('authz-public-info', () => {
  it('lets anyone GET the health checks, their sub-paths and the version', async () => {
    const k = kernel();
    for (const path of ['/healthz', '/healthz/ping', '/livez', '/livez/ping', '/readyz', '/readyz/shutdown', '/version', '/version/']) {
      expect(await decide(k, nonResource(path)), path).toBe('allow');
      expect(await decide(k, nonResource(path, 'get', alice)), path).toBe('allow');
    }
  });

  it('gives no opinion on discovery, other paths, other verbs and resources', async () => {
    const k = kernel();
    for (const path of ['/', '/api', '/api/v1', '/apis', '/openapi/v2', '/openapi/v3', '/metrics', '/healthzz', '/versions', '/version/x']) {
      expect(await decide(k, nonResource(path)), path).toBeUndefined();
    }
    expect(await decide(k, nonResource('/healthz', 'post'))).toBeUndefined();
    expect(await decide(k, { ...listNamespaces, path: '/healthz' })).toBeUndefined();
  });

  it('with discovery, also lets anyone GET /api, /apis and OpenAPI, but no resources', async () => {
    const k = kernel({ discovery: true });
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/openapi/v2', '/openapi/v3', '/openapi/v3/api/v1']) {
      expect(await decide(k, nonResource(path)), path).toBe('allow');
    }
    expect(await decide(k, listNamespaces)).toBeUndefined();
    expect(await decide(k, nonResource('/metrics'))).toBeUndefined();
  });

  it('takes its own list of paths', async () => {
    const k = kernel({ paths: ['/healthz', '/status/*'] });
    expect(await decide(k, nonResource('/healthz'))).toBe('allow');
    expect(await decide(k, nonResource('/status/ready'))).toBe('allow');
    expect(await decide(k, nonResource('/version'))).toBeUndefined();
    expect(await decide(k, nonResource('/healthz/ping'))).toBeUndefined();
  });

  it('lets an earlier authorizer deny first', async () => {
    const k = kernel();
    k.hooks.authorize.tap({ name: 'deny-version', stage: 0 }, (a) => (a.path === '/version' ? { decision: 'deny' } : undefined));
    expect(await decide(k, nonResource('/version'))).toBe('deny');
  });

  it('rejects a path rule that is not RBAC syntax, naming the option', () => {
    expect(() => kernel({ paths: ['healthz'] })).toThrow('plugin "@skiff/plugin-authz-public-info": option "paths[0]" must be a string matching');
    expect(() => kernel({ paths: ['/a*b'] })).toThrow('option "paths[0]"');
    expect(() => kernel({ discovery: 'yes' })).toThrow('option "discovery" must be a boolean (got "yes")');
  });
});

describe('pathMatcher', () => {
  it('matches exact paths and "*"-suffixed prefixes only', () => {
    const matches = pathMatcher(['/exact', '/prefix/*', '/also*']);
    expect(['/exact', '/prefix/', '/prefix/a/b', '/also', '/alsothis'].map(matches)).toEqual([true, true, true, true, true]);
    expect(['/exact/', '/exactly', '/prefix', '/other'].map(matches)).toEqual([false, false, false, false]);
    expect(pathMatcher(['*'])('/anything')).toBe(true);
  });
});
