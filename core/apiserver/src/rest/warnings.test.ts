import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

// Warnings admission taps add (AdmissionRequest.warnings) leave in the Warning header of every write's answer.

const warner = definePlugin({
  name: 'test-warner',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.validate.tap('test-warner', (request) => {
      if (request.resource.resource === 'pods') request.warnings?.push(`${request.operation.toLowerCase()} of "${request.name}"`);
    });
  },
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ plugins: [warner] });
});
afterAll(async () => {
  await server?.stop();
});

describe('admission warnings', () => {
  it('reach the client on create, update, patch, delete and delete of a collection', async () => {
    const base = '/api/v1/namespaces/default/pods';
    const created = await server.request('POST', base, { body: pod('warned') });
    expect(created.headers.warning).toBe('299 - "create of \\"warned\\""');
    const replaced = await server.request('PUT', `${base}/warned`, { body: { ...created.json, metadata: { ...created.json.metadata, labels: { a: 'b' } } } });
    expect(replaced.headers.warning).toBe('299 - "update of \\"warned\\""');
    const patched = await server.request('PATCH', `${base}/warned`, {
      body: { metadata: { labels: { a: 'c' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.headers.warning).toBe('299 - "update of \\"warned\\""');
    const deleted = await server.request('DELETE', `${base}/warned`, { body: { gracePeriodSeconds: 0 } });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.warning).toBe('299 - "delete of \\"warned\\""');
    await server.request('POST', base, { body: pod('one') });
    await server.request('POST', base, { body: pod('two') });
    const collection = await server.request('DELETE', `${base}?gracePeriodSeconds=0`);
    expect(collection.headers.warning).toBe('299 - "delete of \\"one\\"", 299 - "delete of \\"two\\""');
  });
});
