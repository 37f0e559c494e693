import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobufObject, encodeProtobufObject } from '@skiff/api/protobuf';
import { AdmissionError, definePlugin, type AuditEvent } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

const calls: string[] = [];
const audit: AuditEvent[] = [];
const finished: string[] = [];
let frozenInValidate: boolean | undefined;

const observer = definePlugin({
  name: 'test-observer',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.authenticate.tap({ name: 'test-observer', stage: -2000 }, () => void calls.push('authenticate'));
    kernel.hooks.authorize.tap({ name: 'test-observer', stage: -2000 }, () => void calls.push('authorize'));
    kernel.hooks.mutate.tap('test-observer', (request) => {
      calls.push(`mutate ${request.operation}`);
      request.onFinished?.((outcome) => finished.push(`${request.name} ${outcome.succeeded} ${outcome.object?.metadata.name ?? '-'}`));
      const labels = request.object?.metadata.labels;
      if (labels?.reject === 'mutate') throw new AdmissionError(`pods "${request.name}" is forbidden: rejected by mutate`);
      if (labels?.reject === 'quota') throw new AdmissionError('exceeded quota', 429);
      if (labels?.reject === 'crash') throw new Error('plugin bug');
      if (request.object && request.operation === 'CREATE') request.object.metadata.annotations = { ...request.object.metadata.annotations, mutated: 'yes' };
    });
    kernel.hooks.validate.tap('test-observer', (request) => {
      calls.push(`validate ${request.operation}`);
      if (request.object) frozenInValidate = Object.isFrozen(request.object) && Object.isFrozen(request.object.spec);
      if (request.object?.metadata.labels?.reject === 'validate')
        throw new AdmissionError('denied by policy', 422, [{ type: 'FieldValueForbidden', field: 'metadata.labels', message: 'not allowed' }]);
    });
    kernel.hooks.audit.tap('test-observer', (event) => void audit.push(event));
  },
});

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ plugins: [observer] });
});
afterAll(async () => {
  await server?.stop();
});

describe('request pipeline', () => {
  it('runs authenticate → authorize → mutate → validate in order and audits both stages', async () => {
    calls.length = 0;
    audit.length = 0;
    const created = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('ordered') });
    expect(created.status).toBe(201);
    expect(calls).toEqual(['authenticate', 'authorize', 'mutate CREATE', 'validate CREATE']);
    expect(frozenInValidate).toBe(true);
    expect(created.json.metadata.annotations).toEqual({ mutated: 'yes' });
    const stages = audit.filter((event) => event.objectRef?.name === 'ordered' || event.requestURI.endsWith('/pods')).map((event) => event.stage);
    expect(stages).toEqual(['RequestReceived', 'ResponseComplete']);
    const complete = audit.find((event) => event.stage === 'ResponseComplete')!;
    expect(complete).toMatchObject({
      verb: 'create',
      user: { username: 'admin' },
      responseStatus: { code: 201 },
      objectRef: { resource: 'pods', namespace: 'default' },
    });
    expect(complete.requestObject?.metadata.name).toBe('ordered');
  });

  it('fills in server-owned metadata on create', async () => {
    const { json } = await server.request('POST', '/api/v1/namespaces/default/pods', {
      body: { ...pod(''), metadata: { generateName: 'web-', creationTimestamp: null, uid: 'mine' }, status: {} },
    });
    expect(json.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(json.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(json.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(json.metadata.generation).toBe(1);
    expect(Number(json.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(json.metadata.namespace).toBe('default');
    expect(json.spec.restartPolicy).toBe('Always');
    expect(json.status).toEqual({ phase: 'Pending' });
  });

  it('answers 401 with the reasons authenticators gave, and 401 without any credential', async () => {
    const bad = await server.request('GET', '/api/v1/namespaces/default/pods', { token: 'nope' });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized: invalid bearer token' });
    const none = await server.request('GET', '/version', { token: null });
    expect(none.status).toBe(401);
    expect(none.json.message).toBe('Unauthorized');
  });

  it("answers 403 worded like Kubernetes's authorizer", async () => {
    const list = await server.request('POST', '/api/v1/namespaces/default/pods', { token: 'alice-token', body: pod('x') });
    expect(list.status).toBe(403);
    expect(list.json.message).toBe('pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "default"');
    const scaled = await server.request('PUT', '/apis/apps/v1/namespaces/prod/deployments/web/scale', { token: 'alice-token', body: {} });
    expect(scaled.json.message).toBe(
      'deployments.apps "web" is forbidden: User "alice" cannot update resource "deployments/scale" in API group "apps" in the namespace "prod"',
    );
    const cluster = await server.request('DELETE', '/api/v1/namespaces/kube-system', { token: 'alice-token' });
    expect(cluster.json.message).toBe(
      'namespaces "kube-system" is forbidden: User "alice" cannot delete resource "namespaces" in API group "" in the namespace "kube-system"',
    );
  });

  it('tells admission taps how their request ended, once it is answered', async () => {
    finished.length = 0;
    expect((await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('ends-well') })).status).toBe(201);
    const refused = await server.request('POST', '/api/v1/namespaces/default/pods', {
      body: { ...pod('ends-badly'), metadata: { name: 'ends-badly', labels: { reject: 'validate' } } },
    });
    expect(refused.status).toBe(422);
    expect(finished).toEqual(['ends-well true ends-well', 'ends-badly false -']);
  });

  it('turns admission rejections into a Status with their code', async () => {
    const forbidden = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('m', { metadata: { labels: { reject: 'mutate' } } }) });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json).toMatchObject({ reason: 'Forbidden', message: 'pods "m" is forbidden: rejected by mutate' });
    const quota = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('q', { metadata: { labels: { reject: 'quota' } } }) });
    expect(quota.status).toBe(429);
    expect(quota.json.reason).toBe('TooManyRequests');
    const invalid = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('v', { metadata: { labels: { reject: 'validate' } } }) });
    expect(invalid.status).toBe(422);
    expect(invalid.json.details.causes).toEqual([{ reason: 'FieldValueForbidden', field: 'metadata.labels', message: 'not allowed' }]);
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/v')).status).toBe(404);
  });

  it('answers 500 with a Status when a plugin fails unexpectedly, and audits it as Panic', async () => {
    audit.length = 0;
    const crashed = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('c', { metadata: { labels: { reject: 'crash' } } }) });
    expect(crashed.status).toBe(500);
    expect(crashed.json).toMatchObject({
      kind: 'Status',
      reason: 'InternalError',
      message: 'Internal error occurred: admission plugin "test-observer" failed: plugin bug',
    });
    expect(audit.map((event) => event.stage)).toEqual(['RequestReceived', 'Panic']);
  });

  it('answers 400 naming the field for a type error, and for unknown fields under Strict', async () => {
    const typeError = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 'three' } },
    });
    expect(typeError.status).toBe(400);
    expect(typeError.json.reason).toBe('BadRequest');
    expect(typeError.json.message).toContain('spec.replicas');
    const strict = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { unknownField: 1 } },
    });
    expect(strict.status).toBe(400);
    expect(strict.json.message).toContain('strict decoding error: unknown field "spec.unknownField"');
  });

  it('warns about unknown fields with fieldValidation=Warn and ignores them with Ignore', async () => {
    const warned = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Warn', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'warned' }, spec: { unknownField: 1 } },
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toBe('299 - "unknown field \\"spec.unknownField\\""');
    const ignored = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Ignore', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ignored' }, spec: { unknownField: 1 } },
    });
    expect(ignored.status).toBe(201);
    expect(ignored.headers.warning).toBeUndefined();
  });

  it('names fields a JSON or YAML body repeats: an error with Strict, a warning with Warn', async () => {
    const json = '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"dup"},"spec":{"replicas":1,"replicas":2}}';
    const strict = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict', {
      body: json,
      contentType: 'application/json',
    });
    expect(strict.status).toBe(400);
    expect(strict.json.message).toContain('strict decoding error: duplicate field "spec.replicas"');
    const warned = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments?fieldValidation=Warn', {
      body: json,
      contentType: 'application/json',
    });
    expect(warned.status).toBe(201);
    expect(warned.headers.warning).toBe('299 - "duplicate field \\"spec.replicas\\""');
    const yaml = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dup\n  labels: {a: b}\n  labels: {c: d}\n';
    const patched = await server.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/dup?fieldManager=t&fieldValidation=Strict', {
      body: yaml,
      contentType: 'application/apply-patch+yaml',
    });
    expect(patched.status).toBe(400);
    expect(patched.json.message).toBe('error strict decoding YAML: yaml: unmarshal errors:\n  line 6: key "labels" already set in map');
  });

  it('answers 422 Invalid from semantic validation', async () => {
    const invalid = await server.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'neg' }, spec: { replicas: -1 } },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json).toMatchObject({
      reason: 'Invalid',
      message: 'Deployment.apps "neg" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      details: { name: 'neg', group: 'apps', kind: 'Deployment' },
    });
  });

  it('creates from a protobuf body, as kubectl 1.32 and later send one, and answers in JSON', async () => {
    const body = Buffer.from(encodeProtobufObject(pod('from-protobuf', { metadata: { labels: { wire: 'protobuf' } } })));
    const created = await server.request('POST', '/api/v1/namespaces/default/pods', { body, contentType: 'application/vnd.kubernetes.protobuf' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      kind: 'Pod',
      metadata: { name: 'from-protobuf', labels: { wire: 'protobuf' } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    });
  });

  it('answers in protobuf when the client asks for it first (objects and lists), in JSON otherwise', async () => {
    const accept = 'application/vnd.kubernetes.protobuf, application/json';
    const got = await server.request('GET', '/api/v1/namespaces/default/pods/from-protobuf', { headers: { accept } });
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    expect(decodeProtobufObject(got.raw)).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'from-protobuf', labels: { wire: 'protobuf' } } });
    const list = await server.request('GET', '/api/v1/namespaces/default/pods', { headers: { accept } });
    expect(decodeProtobufObject(list.raw)).toMatchObject({
      kind: 'PodList',
      items: expect.arrayContaining([expect.objectContaining({ metadata: expect.objectContaining({ name: 'from-protobuf' }) })]),
    });
    const missing = await server.request('GET', '/api/v1/namespaces/default/pods/nope', { headers: { accept } });
    expect(missing.headers['content-type']).toBe('application/json');
    expect(missing.json.reason).toBe('NotFound');
    const json = await server.request('GET', '/api/v1/namespaces/default/pods/from-protobuf');
    expect(json.json.metadata.name).toBe('from-protobuf');
  });

  it('answers 400 for bodies that do not fit the request', async () => {
    const mismatch = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('n', { metadata: { namespace: 'other' } }) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.message).toBe('the namespace of the provided object does not match the namespace sent on the request');
    const wrongKind = await server.request('POST', '/api/v1/namespaces/default/pods', { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } } });
    expect(wrongKind.status).toBe(400);
    const notJson = await server.request('POST', '/api/v1/namespaces/default/pods', { body: '{nope' });
    expect(notJson.status).toBe(400);
    const protobuf = await server.request('POST', '/api/v1/namespaces/default/pods', {
      body: Buffer.from([0x6b, 0x38, 0x73, 0x00]),
      contentType: 'application/vnd.kubernetes.protobuf',
    });
    expect(protobuf.status).toBe(400);
    expect(protobuf.json.message).toBe('the request body is not valid protobuf: no protobuf definition for  in no group version');
    const plainText = await server.request('POST', '/api/v1/namespaces/default/pods', { body: 'x', contentType: 'text/plain' });
    expect(plainText.status).toBe(415);
    expect(plainText.json.reason).toBe('UnsupportedMediaType');
    const noName = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('') });
    expect(noName.status).toBe(422);
    expect(noName.json.message).toContain('metadata.name: Required value');
  });

  it('answers 404 for unknown objects, resources and paths, and 409 for duplicates', async () => {
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/missing')).json).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'pods "missing" not found',
      details: { name: 'missing', kind: 'pods' },
    });
    expect((await server.request('GET', '/api/v1/namespaces/default/widgets')).status).toBe(404);
    expect((await server.request('GET', '/apis/apps/v2/namespaces/default/deployments')).status).toBe(404);
    expect((await server.request('GET', '/nothing/here')).status).toBe(404);
    expect((await server.request('GET', '/api/v1/namespaces/default/nodes')).status).toBe(404);
    await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'twice' } } });
    const again = await server.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'twice' } } });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ reason: 'AlreadyExists', message: 'configmaps "twice" already exists' });
  });

  it('runs everything but the write for dryRun=All', async () => {
    calls.length = 0;
    const dry = await server.request('POST', '/api/v1/namespaces/default/pods?dryRun=All', { body: pod('dry') });
    expect(dry.status).toBe(201);
    expect(dry.json.metadata.annotations).toEqual({ mutated: 'yes' });
    expect(dry.json.metadata.resourceVersion).toBeUndefined();
    expect(calls).toContain('validate CREATE');
    expect((await server.request('GET', '/api/v1/namespaces/default/pods/dry')).status).toBe(404);
    expect((await server.request('POST', '/api/v1/namespaces/default/pods?dryRun=Some', { body: pod('dry') })).status).toBe(400);
  });

  it('issues loopback tokens that authenticate in-process clients through the same pipeline', async () => {
    const handler = server.kernel.resolve('apiHandler');
    const token = handler.issueLoopbackToken({ username: 'system:kube-scheduler', groups: ['system:masters'] });
    const response = await handler.handle({
      method: 'GET',
      path: '/api/v1/namespaces/default/pods/ordered',
      query: {},
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(200);
    expect((response.body as { metadata: { name: string } }).metadata.name).toBe('ordered');
    const created = await handler.handle({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      query: {},
      headers: { authorization: `Bearer ${token}` },
      body: { metadata: { name: 'from-loopback' }, data: { a: '1' } },
    });
    expect(created.status).toBe(201);
    const stranger = await handler.handle({
      method: 'GET',
      path: '/api/v1/namespaces/default/pods',
      query: {},
      headers: { authorization: 'Bearer skiff-loopback.forged' },
    });
    expect(stranger.status).toBe(401);
  });
});
