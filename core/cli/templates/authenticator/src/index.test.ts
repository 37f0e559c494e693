import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kernel, type AuthnRequest } from '@skiff/kernel';
import { startTestCluster, type TestCluster } from '@skiff/testing';
import plugin from './index.js';

const keys = [{ key: 'k-3f9a1c', username: 'build-bot', groups: ['ci'] }];

function authnRequest(headers: Record<string, string>): AuthnRequest {
  return { headers, errors: [] };
}

describe('the authenticate tap', () => {
  const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { keys });

  it('maps a known key to its user, in system:authenticated', async () => {
    expect(await kernel.hooks.authenticate.promise(authnRequest({ 'x-api-key': 'k-3f9a1c' }))).toEqual({
      user: { username: 'build-bot', groups: ['ci', 'system:authenticated'] },
    });
  });

  it('refuses an unknown key with a reason, and passes requests without the header on', async () => {
    const wrong = authnRequest({ 'x-api-key': 'guess' });
    expect(await kernel.hooks.authenticate.promise(wrong)).toBeUndefined();
    expect(wrong.errors).toEqual(['invalid API key in the x-api-key header']);
    const other = authnRequest({ authorization: 'Bearer something-else' });
    expect(await kernel.hooks.authenticate.promise(other)).toBeUndefined();
    expect(other.errors).toEqual([]);
  });

  it('checks its options when the plugin loads', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, {})).toThrow('option "keys" is required');
  });
});

/** A GET over real HTTPS, trusting the test cluster's CA, with the given headers. */
function get(cluster: TestCluster, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { caPem } = cluster.kernel.resolve('apiServerInfo');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, cluster.server), { ca: caPem, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('in a whole cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [[plugin, { keys }]] });
  });
  afterAll(() => cluster?.stop());

  it('lets a request with a known key in, and answers an unknown key with 401 and the reason', async () => {
    expect(await get(cluster, '/api/v1/namespaces/default', { 'x-api-key': 'k-3f9a1c' })).toMatchObject({ status: 200 });
    const refused = await get(cluster, '/api/v1/namespaces/default', { 'x-api-key': 'guess' });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', message: 'Unauthorized: invalid API key in the x-api-key header' });
  });
});
