import { createLoopbackClient } from '@skiff/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHENTICATION_CONFIGMAP, publishAuthenticationConfig } from './authentication-configmap.js';
import { startTestServer, type TestServer } from './test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const PATH = `/api/v1/namespaces/${AUTHENTICATION_CONFIGMAP.namespace}/configmaps/${AUTHENTICATION_CONFIGMAP.name}`;

describe('kube-system/extension-apiserver-authentication', () => {
  it('is created by the first publisher and keeps each publisher’s keys', async () => {
    const client = createLoopbackClient(server.kernel.resolve('apiHandler'), { username: 'system:apiserver', groups: ['system:masters'] });
    await publishAuthenticationConfig(client, { 'client-ca-file': 'CA ONE' });
    const created = await server.request('GET', PATH);
    expect(created.json.data).toEqual({ 'client-ca-file': 'CA ONE' });
    // Two publishers at once (x509 and the front proxy) each land their keys.
    await Promise.all([
      publishAuthenticationConfig(client, { 'requestheader-client-ca-file': 'FRONT CA', 'requestheader-username-headers': '["X-Remote-User"]' }),
      publishAuthenticationConfig(client, { 'client-ca-file': 'CA TWO' }),
    ]);
    const merged = (await server.request('GET', PATH)).json;
    expect(merged.data).toEqual({
      'client-ca-file': 'CA TWO',
      'requestheader-client-ca-file': 'FRONT CA',
      'requestheader-username-headers': '["X-Remote-User"]',
    });
    await publishAuthenticationConfig(client, { 'client-ca-file': 'CA TWO' });
    expect((await server.request('GET', PATH)).json.metadata.resourceVersion).toBe(merged.metadata.resourceVersion);
  });
});
