import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors } from '@skiff/api';
import { definePlugin, type ApiHandler, type ApiResponse, type FlowControlRequest } from '@skiff/kernel';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { isLongRunning } from './flow-control.js';

/** What the test tap saw, and the grants it handed out, by request path. */
const seen: FlowControlRequest[] = [];
const counts: (number | undefined)[] = [];
const released = new Map<string, number>();

/** A flow control plugin that admits everything (and counts releases), except alice's requests under /refused. */
const recording = definePlugin({
  name: 'test-flow-control',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.flowControl.tapPromise('test-flow-control', async (request) => {
      seen.push(request);
      counts.push(await request.objectCount());
      request.responseHeaders['X-Test-Flow'] = request.user.username;
      if (request.namespace === 'refused') throw errors.tooManyRequests('Too many requests: try again later', 3);
      const key = `${request.verb} ${request.path}`;
      released.set(key, released.get(key) ?? 0);
      return { release: () => released.set(key, released.get(key)! + 1) };
    });
  },
});

let server: TestServer;
let handler: ApiHandler;
const ADMIN = { authorization: 'Bearer admin-token' };

/** A request straight into the pipeline, as the HTTPS front hands it over (a remote address: lists may stream). */
const handle = (path: string, query: Record<string, string> = {}): Promise<ApiResponse> =>
  handler.handle({ method: 'GET', path, query, headers: ADMIN, remoteAddress: '127.0.0.1' });

async function drain(response: ApiResponse): Promise<string> {
  let text = '';
  for await (const chunk of response.textStream!) text += String(chunk);
  return text;
}

beforeAll(async () => {
  server = await startTestServer({ plugins: [recording] });
  handler = server.kernel.resolve('apiHandler');
  for (const namespace of ['big', 'small'])
    await server.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  for (let i = 0; i < 3; i++)
    await server.store.create(`/registry/configmaps/small/c${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'small' } });
  for (let i = 0; i < 600; i++)
    await server.store.create(`/registry/configmaps/big/c${i}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}`, namespace: 'big' } });
});
afterAll(() => server?.stop());

describe('the flowControl hook', () => {
  it('sees who asks for what before authorization, and sizes the collection a list reads', async () => {
    seen.length = 0;
    counts.length = 0;
    const forbidden = await server.request('DELETE', '/api/v1/namespaces/small/configmaps/c0', { token: 'alice-token' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers['x-test-flow']).toBe('alice');
    expect(seen[0]).toMatchObject({
      user: { username: 'alice' },
      verb: 'delete',
      isResourceRequest: true,
      apiGroup: '',
      resource: 'configmaps',
      namespace: 'small',
      name: 'c0',
      path: '/api/v1/namespaces/small/configmaps/c0',
    });

    await server.request('GET', '/api/v1/namespaces/small/configmaps?limit=2');
    await server.request('GET', '/api/v1/configmaps');
    await server.request('GET', '/version');
    expect(seen.slice(1).map((request) => [request.verb, request.query.limit])).toEqual([
      ['list', '2'],
      ['list', undefined],
      ['get', undefined],
    ]);
    expect(counts.slice(1)).toEqual([3, 603, undefined]);
  });

  it('sends a refusal as a 429 Status with its Retry-After and the headers the tap set', async () => {
    const refused = await server.request('GET', '/api/v1/namespaces/refused/configmaps');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('3');
    expect(refused.headers['x-test-flow']).toBe('admin');
    expect(refused.json).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 3 } });
  });

  it('releases a grant once the answer is complete: a streamed list after its last chunk', async () => {
    const releases = (path: string) => released.get(`list ${path}`) ?? 0;
    const before = releases('/api/v1/namespaces/small/configmaps');
    const small = await handle('/api/v1/namespaces/small/configmaps');
    expect(small.textStream).toBeUndefined();
    expect(releases('/api/v1/namespaces/small/configmaps')).toBe(before + 1);

    const big = await handle('/api/v1/namespaces/big/configmaps');
    expect(big.textStream).toBeDefined();
    expect(releases('/api/v1/namespaces/big/configmaps')).toBe(0);
    expect(JSON.parse(await drain(big)).items).toHaveLength(600);
    expect(releases('/api/v1/namespaces/big/configmaps')).toBe(1);
  });

  it('releases a watch as soon as it starts, however its events are framed', async () => {
    for (const accept of ['application/json', 'application/vnd.kubernetes.protobuf;type=watch']) {
      const before = released.get('watch /api/v1/namespaces/big/configmaps') ?? 0;
      const controller = new AbortController();
      const watch = await handler.handle({
        method: 'GET',
        path: '/api/v1/namespaces/big/configmaps',
        query: { watch: 'true', resourceVersion: '0' },
        headers: { ...ADMIN, accept },
        remoteAddress: '127.0.0.1',
        signal: controller.signal,
      });
      expect(watch.stream ?? watch.textStream).toBeDefined();
      expect(released.get('watch /api/v1/namespaces/big/configmaps'), accept).toBe(before + 1);
      controller.abort();
    }
  });

  it('counts logs, proxy, exec, attach and port-forward as long-running, as watches', () => {
    for (const subresource of ['log', 'proxy', 'exec', 'attach', 'portforward']) expect(isLongRunning({ verb: 'get', subresource }), subresource).toBe(true);
    expect(isLongRunning({ verb: 'watch', subresource: '' })).toBe(true);
    expect(isLongRunning({ verb: 'get', subresource: 'status' })).toBe(false);
    expect(isLongRunning({ verb: 'list', subresource: '' })).toBe(false);
  });
});
