import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

// The budgets of patches and stored objects, through the real HTTP pipeline and store.

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';
const LIMIT = 3 * 1024 * 1024;

/** `count` labels of 63-character values: about 76 bytes each, a managed field of about 15 bytes each. */
const labels = (count: number, prefix = 'k') => Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, 'v'.repeat(63)]));
const create = async (name: string) => {
  const created = await server.request('POST', CONFIGMAPS, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } });
  expect(created.status).toBe(201);
  return created.json;
};

describe('the object size limit', () => {
  it('stores a merge patch of 2.8 MB of labels without the managed fields that would take it past the limit', async () => {
    await create('wide');
    const patched = await server.request('PATCH', `${CONFIGMAPS}/wide`, { body: { metadata: { labels: labels(37_000) } }, contentType: MERGE });
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.json.metadata.labels)).toHaveLength(37_000);
    // With a managed field per label the object would be past 3 MiB; Kubernetes drops them too.
    expect(patched.json.metadata.managedFields).toBeUndefined();
    const stored = await server.request('GET', `${CONFIGMAPS}/wide`);
    expect(Buffer.byteLength(stored.text)).toBeLessThanOrEqual(LIMIT);
    // What is stored can be sent back.
    expect((await server.request('PUT', `${CONFIGMAPS}/wide`, { body: stored.text })).status).toBe(200);
  });

  it('refuses (413) the same labels applied server-side, whose managed fields are the point', async () => {
    const applied = await server.request('PATCH', `${CONFIGMAPS}/applied?fieldManager=tester`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', labels: labels(37_000) } }),
      contentType: APPLY,
    });
    expect(applied.status).toBe(413);
    expect(applied.json).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect(applied.json.message).toBe(`Request entity too large: the ConfigMap "applied" would be larger than the limit of ${LIMIT} bytes`);
    expect((await server.request('GET', `${CONFIGMAPS}/applied`)).status).toBe(404);
  });

  it('refuses (413) a patch whose result is past the limit, and leaves the object as it was', async () => {
    const before = await create('grows');
    expect((await server.request('PATCH', `${CONFIGMAPS}/grows`, { body: { metadata: { labels: labels(25_000, 'a') } }, contentType: MERGE })).status).toBe(
      200,
    );
    const stored = (await server.request('GET', `${CONFIGMAPS}/grows`)).json;
    const again = await server.request('PATCH', `${CONFIGMAPS}/grows`, { body: { metadata: { labels: labels(25_000, 'b') } }, contentType: MERGE });
    expect(again.status).toBe(413);
    expect(again.json.message).toBe(`Request entity too large: the patched ConfigMap "grows" would be larger than the limit of ${LIMIT} bytes`);
    expect((await server.request('GET', `${CONFIGMAPS}/grows`)).json.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
    expect(before.metadata.resourceVersion).not.toBe(stored.metadata.resourceVersion);
  });
});

describe('JSON patch budgets', () => {
  it('answers 413 for more than 10,000 operations, as Kubernetes words it', async () => {
    await create('ops');
    const operations = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'ops' }));
    const answer = await server.request('PATCH', `${CONFIGMAPS}/ops`, { body: operations, contentType: JSON_PATCH });
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({
      kind: 'Status',
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    });
  });

  it('stops copies that double the object at the copy budget (422), and adds past the object limit (413)', async () => {
    await create('copies');
    // Copying a map into its own member doubles it every time: 2^22 copies of it unless stopped.
    const selfCopies = Array.from({ length: 22 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/k${i}` }));
    const doubled = await server.request('PATCH', `${CONFIGMAPS}/copies`, {
      body: [{ op: 'add', path: '/data', value: { a: 'x' } }, ...selfCopies],
      contentType: JSON_PATCH,
    });
    expect(doubled.status).toBe(422);
    expect(doubled.json.message).toMatch(
      /^json patch copy operation \d+ does not apply: copying "\/data" would take the bytes copied by this patch past the limit of 3145728$/,
    );

    // 2.8 MB of labels stored, then 1.2 MB more in one operation: stopped at that operation.
    expect((await server.request('PATCH', `${CONFIGMAPS}/copies`, { body: { metadata: { labels: labels(37_000) } }, contentType: MERGE })).status).toBe(200);
    const added = await server.request('PATCH', `${CONFIGMAPS}/copies`, {
      body: [
        { op: 'test', path: '/metadata/name', value: 'copies' },
        { op: 'add', path: '/data', value: { a: 'x'.repeat(1_200_000) } },
      ],
      contentType: JSON_PATCH,
    });
    expect(added.status).toBe(413);
    expect(added.json.message).toBe(`Request entity too large: json patch add operation 1 at "/data" takes the object past the limit of ${LIMIT} bytes`);
  });
});
