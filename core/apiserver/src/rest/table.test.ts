import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';
import { tableFormatOf } from './table.js';

const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('tableFormatOf', () => {
  it('honours the first acceptable media type', () => {
    expect(tableFormatOf(TABLE_ACCEPT, {})).toEqual({ apiVersion: 'meta.k8s.io/v1', includeObject: 'Metadata' });
    expect(tableFormatOf('application/json;as=Table;v=v1beta1;g=meta.k8s.io', { includeObject: 'Object' })).toEqual({
      apiVersion: 'meta.k8s.io/v1beta1',
      includeObject: 'Object',
    });
    expect(tableFormatOf('application/json, application/json;as=Table;v=v1;g=meta.k8s.io', {})).toBeUndefined();
    expect(tableFormatOf('application/json, */*', {})).toBeUndefined();
    expect(() => tableFormatOf(TABLE_ACCEPT, { includeObject: 'All' })).toThrow(/includeObject/);
  });
});

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('t1', { metadata: { labels: { app: 'x' } } }) });
  await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'cm1' } } });
});
afterAll(async () => {
  await server?.stop();
});

describe('Table responses', () => {
  it('lists as a Table with the definition’s columns and PartialObjectMetadata rows', async () => {
    const { json, headers } = await server.request('GET', '/api/v1/namespaces/default/pods?limit=500', { headers: { accept: TABLE_ACCEPT } });
    expect(headers['content-type']).toContain('application/json');
    expect(json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(Number(json.metadata.resourceVersion)).toBe(server.store.revision());
    expect(json.columnDefinitions.map((column: any) => [column.name, column.priority])).toEqual([
      ['Name', 0],
      ['Status', 0],
      ['Node', 1],
    ]);
    expect(json.rows).toHaveLength(1);
    expect(json.rows[0].cells).toEqual(['t1', 'Pending', '<none>']);
    expect(json.rows[0].object).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 't1', namespace: 'default', labels: { app: 'x' } },
    });
  });

  it('honours includeObject=Object and None', async () => {
    const full = (await server.request('GET', '/api/v1/namespaces/default/pods?includeObject=Object', { headers: { accept: TABLE_ACCEPT } })).json;
    expect(full.rows[0].object).toMatchObject({ kind: 'Pod', spec: { containers: [{ name: 'web' }] } });
    const none = (await server.request('GET', '/api/v1/namespaces/default/pods?includeObject=None', { headers: { accept: TABLE_ACCEPT } })).json;
    expect(none.rows[0]).toEqual({ cells: ['t1', 'Pending', '<none>'] });
  });

  it('answers a single GET with a one-row Table', async () => {
    const { json } = await server.request('GET', '/api/v1/namespaces/default/pods/t1', { headers: { accept: TABLE_ACCEPT } });
    expect(json.kind).toBe('Table');
    expect(json.rows).toHaveLength(1);
    expect(json.metadata.resourceVersion).toBeTruthy();
  });

  it('falls back to Name and Created At for kinds without columns', async () => {
    const { json } = await server.request('GET', '/api/v1/namespaces/default/configmaps', { headers: { accept: TABLE_ACCEPT } });
    expect(json.columnDefinitions.map((column: any) => column.name)).toEqual(['Name', 'Created At']);
    expect(json.rows[0].cells[0]).toBe('cm1');
    expect(json.rows[0].cells[1]).toMatch(/^\d{4}-/);
  });

  it('answers plain JSON when the client does not ask for a Table', async () => {
    const { json } = await server.request('GET', '/api/v1/namespaces/default/pods', { headers: { accept: 'application/json, */*' } });
    expect(json.kind).toBe('PodList');
  });
});

describe('kinds without tables', () => {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { nonResourceAttributes: { path: '/', verb: 'get' } },
  };
  const REVIEWS = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

  it('answer 406 to a client that takes only a Table, as upstream’s e2e test asks a SelfSubjectAccessReview', async () => {
    const refused = await server.request('POST', REVIEWS, { body: review, headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    expect(refused.status).toBe(406);
    expect(refused.json).toMatchObject({
      reason: 'NotAcceptable',
      message: 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    });
    // kubectl's header also takes the object itself.
    const accepted = await server.request('POST', REVIEWS, { body: review, headers: { accept: TABLE_ACCEPT } });
    expect(accepted.status).toBe(201);
    expect(accepted.json.kind).toBe('SelfSubjectAccessReview');
    const eviction = await server.request('POST', '/api/v1/namespaces/default/pods/t1/eviction', {
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 't1' } },
      headers: { accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' },
    });
    expect(eviction.status).toBe(406);
    const table = await server.request('GET', '/api/v1/namespaces/default/pods/t1/status', {
      headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(table.json.kind).toBe('Table');
  });
});
