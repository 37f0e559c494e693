import { describe, expect, it } from 'vitest';
import { AdmissionError, Kernel, type AdmissionRequest } from '@skiff/kernel';
import type { KubeObject } from '@skiff/api';
import plugin from './index.js';

function request(overrides: Partial<AdmissionRequest>, namespaces: Record<string, KubeObject>): AdmissionRequest {
  return {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    subresource: '',
    namespace: 'team-a',
    name: 'web',
    object: { metadata: { name: 'web' } },
    user: { username: 'alice', groups: [] },
    dryRun: false,
    get: async (_resource, _ns, name) => namespaces[name],
    ...overrides,
  };
}

const active = { metadata: { name: 'team-a' }, status: { phase: 'Active' } };
const terminating = { metadata: { name: 'team-a' }, status: { phase: 'Terminating' } };

async function admit(req: AdmissionRequest, options?: object) {
  const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);
  await kernel.hooks.validate.promise(req);
}

describe('namespace lifecycle admission', () => {
  it('admits creates in an active namespace', async () => {
    await expect(admit(request({}, { 'team-a': active }))).resolves.toBeUndefined();
  });

  it('rejects creates in a missing namespace with 404', async () => {
    const err = await admit(request({}, {})).catch((e: AdmissionError) => e);
    expect(err).toBeInstanceOf(AdmissionError);
    expect(err).toMatchObject({ status: 404, message: 'namespaces "team-a" not found' });
  });

  it('rejects creates in a terminating namespace with 403', async () => {
    const err = await admit(request({}, { 'team-a': terminating })).catch((e: AdmissionError) => e);
    expect(err).toMatchObject({
      status: 403,
      message: 'pods "web" is forbidden: unable to create new content in namespace team-a because it is being terminated',
    });
  });

  it('lets updates and deletes through in a terminating namespace', async () => {
    await expect(admit(request({ operation: 'UPDATE' }, { 'team-a': terminating }))).resolves.toBeUndefined();
    await expect(admit(request({ operation: 'DELETE', object: undefined }, { 'team-a': terminating }))).resolves.toBeUndefined();
  });

  it('protects immortal namespaces from deletion, configurably', async () => {
    const del = (name: string) =>
      request({ operation: 'DELETE', resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: '', name, object: undefined }, {});
    await expect(admit(del('kube-system'))).rejects.toThrow('namespaces "kube-system" is forbidden: this namespace may not be deleted');
    await expect(admit(del('team-a'))).resolves.toBeUndefined();
    await expect(admit(del('prod'), { immortalNamespaces: ['prod'] })).rejects.toThrow('may not be deleted');
  });

  it('rejects a wrongly typed option with the option path', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { immortalNamespaces: 'default' })).toThrow(
      'plugin "@skiff/plugin-admission-namespace-lifecycle": option "immortalNamespaces" must be an array (got "default")',
    );
  });
});
