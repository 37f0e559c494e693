import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from './request-info.js';

describe('parseRequestInfo', () => {
  it('parses namespaced collections, objects and subresources', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/default/pods', {})).toMatchObject({
      isResourceRequest: true,
      verb: 'list',
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'pods',
      namespace: 'default',
      name: '',
      subresource: '',
    });
    expect(parseRequestInfo('GET', '/apis/apps/v1/namespaces/prod/deployments/web/scale', {})).toMatchObject({
      verb: 'get',
      apiGroup: 'apps',
      resource: 'deployments',
      namespace: 'prod',
      name: 'web',
      subresource: 'scale',
    });
    expect(parseRequestInfo('POST', '/api/v1/namespaces/default/pods/p/binding', {})).toMatchObject({ verb: 'create', name: 'p', subresource: 'binding' });
  });

  it('maps methods to verbs', () => {
    const verb = (method: string, path: string, query = {}) => parseRequestInfo(method, path, query).verb;
    expect(verb('GET', '/api/v1/pods', { watch: 'true' })).toBe('watch');
    expect(verb('GET', '/api/v1/pods', { watch: '1' })).toBe('watch');
    expect(verb('GET', '/api/v1/watch/namespaces/x/pods')).toBe('watch');
    expect(verb('PUT', '/api/v1/namespaces/x/pods/p')).toBe('update');
    expect(verb('PATCH', '/api/v1/namespaces/x/pods/p')).toBe('patch');
    expect(verb('DELETE', '/api/v1/namespaces/x/pods/p')).toBe('delete');
    expect(verb('DELETE', '/api/v1/namespaces/x/pods')).toBe('deletecollection');
  });

  it('treats a namespace and its status as the namespaces resource, and what is inside as its own resource', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/x', {})).toMatchObject({ resource: 'namespaces', name: 'x', namespace: 'x' });
    expect(parseRequestInfo('PUT', '/api/v1/namespaces/x/finalize', {})).toMatchObject({ resource: 'namespaces', name: 'x', subresource: 'finalize' });
    expect(parseRequestInfo('GET', '/api/v1/namespaces', {})).toMatchObject({ resource: 'namespaces', name: '', verb: 'list' });
  });

  it('authorizes a list narrowed by metadata.name as a request for that name', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/d/pods', { fieldSelector: 'metadata.name=web', watch: 'true' })).toMatchObject({
      verb: 'watch',
      name: 'web',
    });
    expect(parseRequestInfo('GET', '/api/v1/namespaces/d/pods', { fieldSelector: 'metadata.name!=web' }).name).toBe('');
  });

  it('leaves discovery and other paths as non-resource requests', () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/healthz', '/openapi/v3/apis/apps/v1']) {
      expect(parseRequestInfo('GET', path, {})).toMatchObject({ isResourceRequest: false, verb: 'get', path });
    }
  });

  it('decodes escaped path segments and rejects malformed ones', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/a%2Db/pods', {}).namespace).toBe('a-b');
    expect(() => parseRequestInfo('GET', '/api/v1/namespaces/%E0%A4%A/pods', {})).toThrow(/malformed/);
  });

  it('refuses names in the URL that no object can have, with a 400 naming the problem', () => {
    const refusal = (path: string) => {
      try {
        parseRequestInfo('GET', path, {});
      } catch (err) {
        return { status: (err as { status: number }).status, message: (err as Error).message };
      }
      return undefined;
    };
    expect(refusal('/api/v1/namespaces/default/pods/..')).toEqual({ status: 400, message: `invalid name in the URL "..": may not be '..'` });
    expect(refusal('/api/v1/namespaces/./pods')).toMatchObject({ status: 400, message: expect.stringContaining("may not be '.'") });
    expect(refusal('/api/v1/namespaces/default/pods/a%2Fb')).toMatchObject({ status: 400, message: expect.stringContaining("may not contain '/' or '%'") });
    expect(refusal('/api/v1/namespaces/default/pods/a%2525')).toMatchObject({ status: 400 });
    expect(refusal('/api/v1/namespaces/default/pods/a%00b')).toMatchObject({ status: 400, message: expect.stringContaining('control characters') });
    expect(refusal(`/api/v1/namespaces/default/pods/${'x'.repeat(10_000)}`)).toMatchObject({
      status: 400,
      message: expect.stringContaining('longer than 253 characters (got 10000)'),
    });
    expect(refusal('/api/v1/namespaces/default/pods/%E0%A4%A')).toMatchObject({ status: 400 });
    expect(refusal(`/api/v1/namespaces/default/pods/${'x'.repeat(253)}`)).toBeUndefined();
  });
});
