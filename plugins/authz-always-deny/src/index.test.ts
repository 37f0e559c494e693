import { describe, expect, it } from 'vitest';
import { AUTHORIZE_STAGE, Kernel, type AuthzAttributes, type SkiffPlugin } from '@skiff/kernel';
import publicInfo from '@skiff/plugin-authz-public-info';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import plugin from './index.js';

const resource: AuthzAttributes = {
  user: { username: 'alice', groups: ['system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  name: 'web',
  path: '/api/v1/namespaces/default/pods/web',
};
const healthz: AuthzAttributes = { ...resource, isResourceRequest: false, apiVersion: '', resource: '', namespace: '', name: '', path: '/healthz' };
const DENY = { decision: 'deny', reason: 'Everything is forbidden.' };

const kernelWith = (...plugins: [SkiffPlugin<any>, unknown?][]) => {
  const kernel = new Kernel({ config: { logLevel: 'silent' } });
  for (const [p, options] of plugins) kernel.use(p, options);
  return kernel;
};

describe('authz-always-deny', () => {
  it('denies every request, resource or not, whoever asks', async () => {
    const kernel = kernelWith([plugin]);
    for (const attributes of [resource, healthz, { ...resource, verb: 'delete', user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } }]) {
      expect(await kernel.hooks.authorize.promise(attributes)).toEqual(DENY);
    }
  });

  it('at its default stage (catch-all), leaves what earlier authorizers allow to them', async () => {
    const kernel = kernelWith([plugin], [publicInfo]);
    expect(await kernel.hooks.authorize.promise(healthz)).toEqual({ decision: 'allow', reason: 'public info (system:public-info-viewer)' });
    expect(await kernel.hooks.authorize.promise(resource)).toEqual(DENY);
  });

  it('at an earlier stage, denies before the authorizers after it', async () => {
    const kernel = kernelWith([plugin, { stage: AUTHORIZE_STAGE.DEFAULT }], [publicInfo], [alwaysAllow]);
    expect(await kernel.hooks.authorize.promise(healthz)).toEqual(DENY);
    expect(await kernel.hooks.authorize.promise(resource)).toEqual(DENY);
  });

  it('takes only a whole-number stage', () => {
    expect(() => kernelWith([plugin, { stage: 'first' }])).toThrow('plugin "@skiff/plugin-authz-always-deny": option "stage" must be a integer (got "first")');
    expect(() => kernelWith([plugin, { level: 1 }])).toThrow('unknown option "level" (known: stage)');
  });
});
