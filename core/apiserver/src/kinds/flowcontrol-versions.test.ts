import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

// flowcontrol.apiserver.k8s.io/v1beta3 beside the stored v1: what clients built with 1.26–1.28 libraries watch
// (an extension API server's priority-and-fairness informers, which keep it unready until they sync).

const GROUP = '/apis/flowcontrol.apiserver.k8s.io';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

it('serves v1beta3 from the v1 objects, and keeps v1 the preferred version', async () => {
  const group = await server.request('GET', GROUP);
  expect(group.json.preferredVersion.version).toBe('v1');
  expect(group.json.versions.map((v: { version: string }) => v.version)).toContain('v1beta3');

  const level = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: 'old-client' },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } },
  };
  const created = await server.request('POST', `${GROUP}/v1beta3/prioritylevelconfigurations`, { body: level });
  expect(created.status).toBe(201);
  expect(created.json.apiVersion).toBe('flowcontrol.apiserver.k8s.io/v1beta3');
  // v1beta3's zero means the default; as v1 it is 30.
  const asV1 = await server.request('GET', `${GROUP}/v1/prioritylevelconfigurations/old-client`);
  expect(asV1.json).toMatchObject({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1', spec: { limited: { nominalConcurrencyShares: 30 } } });

  const list = await server.request('GET', `${GROUP}/v1beta3/flowschemas`);
  expect(list.status).toBe(200);
  expect(list.json.kind).toBe('FlowSchemaList');
  expect(list.json.items.every((item: { apiVersion: string }) => item.apiVersion === 'flowcontrol.apiserver.k8s.io/v1beta3')).toBe(true);
});
