import { describe, expect, it } from 'vitest';
import { Kernel } from '@skiff/kernel';
import plugin from './index.js';

const attributes = {
  user: { username: 'alice', groups: [] },
  verb: 'delete',
  isResourceRequest: true,
  apiGroup: 'apps',
  apiVersion: 'v1',
  resource: 'deployments',
  subresource: '',
  namespace: 'default',
  name: 'web',
  path: '/apis/apps/v1/namespaces/default/deployments/web',
};

describe('authz-always-allow', () => {
  it('allows any request', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    expect(await kernel.hooks.authorize.promise(attributes)).toEqual({ decision: 'allow', reason: 'always-allow authorizer' });
  });

  it('gives no opinion for anonymous users, so they get 403 unless another authorizer allows', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    const anonymous = { ...attributes, verb: 'list', name: '', user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } };
    expect(await kernel.hooks.authorize.promise(anonymous)).toBeUndefined();
  });

  it('lets an earlier authorizer deny first', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    kernel.hooks.authorize.tap({ name: 'deny-deletes', stage: 0 }, (a) => (a.verb === 'delete' ? { decision: 'deny' } : undefined));
    expect(await kernel.hooks.authorize.promise(attributes)).toEqual({ decision: 'deny' });
  });

  it('takes no options', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { verbose: true })).toThrow(
      'plugin "@skiff/plugin-authz-always-allow": takes no options (got verbose)',
    );
  });
});
