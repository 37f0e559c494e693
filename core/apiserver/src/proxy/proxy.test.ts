import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin } from '@skiff/kernel';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { upgradeRequest } from '../test-support/test-clients.js';
import { startTestBackend, type TestBackend } from './test-backend.js';
import { rewriteLocation } from './forward.js';
import { splitSchemeNamePort } from './target.js';

const ROOT = process.getuid?.() === 0;

/** Provides the admin token as an authentication plugin would, so admin.kubeconfig carries it for kubectl. */
const adminCredential = definePlugin({
  name: 'test-admin-credential',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.lifecycle('test-admin-credential', -250, { start: () => kernel.provide('adminCredential', { token: 'admin-token' }) });
  },
});

/** The real kubectl against the test server; resolves with its exit code and output. */
function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', join(server.dataDir, 'admin.kubeconfig'), ...args], (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}
const NS = '/api/v1/namespaces/default';
const MERGE = 'application/merge-patch+json';

let server: TestServer;
let backend: TestBackend;

async function ok(response: Promise<{ status: number; text: string }>, status = 201) {
  const answer = await response;
  expect(answer.status, answer.text).toBe(status);
}

async function podAt(name: string, ip: string, ports?: number[]) {
  const container = { name: 'app', image: 'busybox', ...(ports ? { ports: ports.map((containerPort) => ({ containerPort })) } : {}) };
  await ok(server.request('POST', `${NS}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [container] } } }));
  await ok(server.request('PATCH', `${NS}/pods/${name}/status`, { body: { status: { podIP: ip, podIPs: [{ ip }] } }, contentType: MERGE }), 200);
}

/** Sends a request through the API server and collects the answer; `body` may be a generator of chunks. */
function call(method: string, path: string, options: { token?: string; body?: Buffer; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string; json: any }>((resolve, reject) => {
    const req = httpsRequest(`${server.info.url}${path}`, {
      method,
      ca: server.info.caPem,
      headers: { authorization: `Bearer ${options.token ?? 'admin-token'}`, ...options.headers },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('proxy names and redirects', () => {
  it('splits scheme:name:port as apimachinery does', () => {
    expect(splitSchemeNamePort('web')).toEqual({ scheme: '', name: 'web', port: '' });
    expect(splitSchemeNamePort('web:8080')).toEqual({ scheme: '', name: 'web', port: '8080' });
    expect(splitSchemeNamePort('https:web:443')).toEqual({ scheme: 'https', name: 'web', port: '443' });
    expect(splitSchemeNamePort('ftp:web:21')).toBeUndefined();
    expect(splitSchemeNamePort(':80')).toBeUndefined();
    expect(splitSchemeNamePort('a:b:c:d')).toBeUndefined();
  });

  it('keeps redirects under the proxy path, and leaves other hosts and relative paths alone', () => {
    const prefix = '/api/v1/namespaces/default/pods/web/proxy';
    expect(rewriteLocation('/x/y', prefix, '10.0.0.2:80', 'api:6443')).toBe(`${prefix}/x/y`);
    expect(rewriteLocation('http://10.0.0.2:80/x/?q=1', prefix, '10.0.0.2:80', 'api:6443')).toBe(`${prefix}/x/?q=1`);
    expect(rewriteLocation(`${prefix}/already`, prefix, '10.0.0.2:80', 'api:6443')).toBe(`${prefix}/already`);
    expect(rewriteLocation('https://example.com/x', prefix, '10.0.0.2:80', 'api:6443')).toBe('https://example.com/x');
    expect(rewriteLocation('relative/x', prefix, '10.0.0.2:80', 'api:6443')).toBe('relative/x');
    expect(rewriteLocation('https://api:6443/x', prefix, '10.0.0.2:80', 'api:6443')).toBe(`https://api:6443${prefix}/x`);
  });
});

describe.skipIf(!ROOT)('the proxy subresources, to a server in a network namespace', () => {
  beforeAll(async () => {
    backend = await startTestBackend([80, 8080]);
    server = await startTestServer({ testDefinitions: false, plugins: [adminCredential] });
    await podAt('web', backend.ip, [8080]);
    await podAt('bare', backend.ip);
    await podAt('local', '127.0.0.1', [8080]);
    await ok(
      server.request('POST', `${NS}/services`, {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], selector: { app: 'web' } },
        },
      }),
    );
    await ok(
      server.request('POST', `${NS}/endpoints`, {
        body: {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: { name: 'web' },
          subsets: [{ addresses: [{ ip: backend.ip, targetRef: { kind: 'Pod', namespace: 'default', name: 'web' } }], ports: [{ name: 'http', port: 8080 }] }],
        },
      }),
    );
    await ok(
      server.request('POST', `${NS}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'empty' }, spec: { ports: [{ port: 80 }] } } }),
    );
    await ok(server.request('POST', `${NS}/endpoints`, { body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'empty' } } }));
    await ok(server.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } } }));
    await ok(
      server.request('PATCH', '/api/v1/nodes/n1/status', {
        body: { status: { addresses: [{ type: 'InternalIP', address: backend.ip }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } } },
        contentType: MERGE,
      }),
      200,
    );
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    backend?.close();
  });

  it('lists pods/proxy, services/proxy and nodes/proxy in discovery', async () => {
    const { json } = await server.request('GET', '/api/v1');
    for (const [name, kind] of [
      ['pods/proxy', 'PodProxyOptions'],
      ['services/proxy', 'ServiceProxyOptions'],
      ['nodes/proxy', 'NodeProxyOptions'],
    ]) {
      expect(json.resources.find((r: { name: string }) => r.name === name)).toMatchObject({ kind, verbs: ['create', 'delete', 'get', 'patch', 'update'] });
    }
  });

  it('forwards every method with its path and query to the pod, without the client credentials', async () => {
    for (const method of ['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT']) {
      const answer = await call(method, `${NS}/pods/web/proxy/some/path/with/${method}?a=1&a=2`, {
        headers: { 'x-test': 'kept', connection: 'keep-alive, x-hop', 'x-hop': 'dropped' },
      });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers['x-backend']).toBe('echo');
      expect(answer.json).toMatchObject({ method, url: `/some/path/with/${method}?a=1&a=2`, port: 8080 });
      expect(answer.json.headers).toMatchObject({ 'x-test': 'kept', 'x-forwarded-uri': `${NS}/pods/web/proxy/some/path/with/${method}` });
      expect(answer.json.headers['x-forwarded-for']).toBeTruthy();
      expect(answer.json.headers.authorization).toBeUndefined();
      expect(answer.json.headers['x-hop']).toBeUndefined();
    }
    const head = await call('HEAD', `${NS}/pods/web/proxy/some/path`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('redirects GET and HEAD without a path to the path with a slash, and forwards other methods to /', async () => {
    for (const method of ['GET', 'HEAD']) {
      const answer = await call(method, `${NS}/pods/web/proxy?method=${method}`);
      expect(answer.status).toBe(301);
      expect(answer.headers.location).toBe(`${NS}/pods/web/proxy/?method=${method}`);
    }
    const deleted = await call('DELETE', `${NS}/pods/web/proxy?method=DELETE`);
    expect(deleted.json).toMatchObject({ method: 'DELETE', url: '/?method=DELETE' });
    const slash = await call('GET', `${NS}/pods/web/proxy/`);
    expect(slash.json).toMatchObject({ method: 'GET', url: '/' });
  });

  it('streams a large request body through, unread by the API server', async () => {
    const body = randomBytes(8 * 1024 * 1024);
    const answer = await call('POST', `${NS}/pods/web/proxy/upload`, { body, headers: { 'content-type': 'application/octet-stream' } });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ method: 'POST', bodyBytes: body.length });
    const small = await call('PUT', `${NS}/pods/web/proxy/echo`, { body: Buffer.from('hello'), headers: { 'content-type': 'text/plain' } });
    expect(small.json).toMatchObject({ method: 'PUT', body: 'hello' });
  });

  it('streams the answer as the backend sends it', async () => {
    const received: string[] = [];
    const done = new Promise<number>((resolve, reject) => {
      const req = httpsRequest(`${server.info.url}${NS}/pods/web/proxy/stream`, { ca: server.info.caPem, headers: { authorization: 'Bearer admin-token' } });
      req.on('response', (res) => {
        res.on('data', (chunk: Buffer) => {
          received.push(chunk.toString());
          // The first part arrives while the backend still holds the response open.
          if (received.length === 1) void call('GET', `${NS}/pods/web/proxy/release`);
        });
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
    expect(await done).toBe(200);
    expect(received.join('')).toBe('firstsecond');
    expect(received[0]).toBe('first');
  });

  it('rewrites redirects to stay under the proxy path and drops the backend CORS headers', async () => {
    const relative = await call('GET', `${NS}/pods/web/proxy/redirect`);
    expect(relative.status).toBe(302);
    expect(relative.headers.location).toBe(`${NS}/pods/web/proxy/elsewhere/x`);
    expect(relative.headers['access-control-allow-origin']).toBeUndefined();
    const absolute = await call('GET', `${NS}/pods/web/proxy/redirect-absolute`);
    expect(absolute.headers.location).toBe(`${NS}/pods/web/proxy/abs/`);
  });

  it('rewrites the links of HTML pages under the proxy path, compressed or not', async () => {
    const prefix = `${NS}/pods/web:8080/proxy`;
    const expected = `<!DOCTYPE html><a href="${prefix}/rewriteme">test</a><script>var s = '<a href="/no">';</script><img src="pic.png" alt="x"><link href="${prefix}/x?a=1&amp;b=2"/>`;
    const plain = await call('GET', `${prefix}/html`);
    expect(plain.status).toBe(200);
    expect(plain.text).toBe(expected);
    const compressed = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(`${server.info.url}${prefix}/html-gzip`, { ca: server.info.caPem, headers: { authorization: 'Bearer admin-token' } });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(gunzipSync(Buffer.concat(chunks)).toString()));
      });
      req.on('error', reject);
      req.end();
    });
    expect(compressed).toBe(expected);
  });

  it('takes the port and scheme from the name, else the first declared container port, else 80', async () => {
    expect((await call('GET', `${NS}/pods/bare/proxy/`)).json).toMatchObject({ port: 80 });
    expect((await call('GET', `${NS}/pods/bare:8080/proxy/x`)).json).toMatchObject({ port: 8080, url: '/x' });
    expect((await call('GET', `${NS}/pods/http:web:80/proxy/x`)).json).toMatchObject({ port: 80 });
    const invalid = await call('GET', `${NS}/pods/ftp:web:80/proxy/x`);
    expect(invalid.status).toBe(400);
    expect(invalid.json.message).toBe('invalid pod request "ftp:web:80"');
  });

  it('refuses pods at addresses that are not global unicast, and unknown pods', async () => {
    const local = await call('GET', `${NS}/pods/local/proxy/`);
    expect(local.status).toBe(400);
    expect(local.json.message).toBe('address not allowed');
    const missing = await call('GET', `${NS}/pods/ghost/proxy/`);
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('pods "ghost" not found');
  });

  it('reaches a Service through an endpoint, by port name or number', async () => {
    for (const name of ['web:http', 'web:80', 'http:web:http']) {
      const answer = await call('POST', `${NS}/services/${name}/proxy/svc?x=y`, { body: Buffer.from('{}'), headers: { 'content-type': 'application/json' } });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json).toMatchObject({ method: 'POST', url: '/svc?x=y', port: 8080, body: '{}' });
    }
    const redirect = await call('GET', `${NS}/services/web:http/proxy`);
    expect(redirect.status).toBe(301);
    const unnamed = await call('GET', `${NS}/services/web/proxy/`);
    expect(unnamed.status).toBe(503);
    expect(unnamed.json.message).toBe('no endpoints available for service "web"');
    const badPort = await call('GET', `${NS}/services/web:81/proxy/`);
    expect(badPort.json).toMatchObject({ code: 503, message: 'no service port 81 found for service "web"' });
    const empty = await call('GET', `${NS}/services/empty/proxy/`);
    expect(empty.json).toMatchObject({ code: 503, message: 'no endpoints available for service "empty"' });
  });

  it('reaches a node at its address: the kubelet port, which nothing serves here, is a 503; another port is proxied', async () => {
    const kubelet = await call('GET', '/api/v1/nodes/n1/proxy/healthz');
    expect(kubelet.status).toBe(503);
    expect(kubelet.json.message).toMatch(/^error trying to reach service: .*ECONNREFUSED/);
    const other = await call('GET', '/api/v1/nodes/n1:8080/proxy/metrics');
    expect(other.json).toMatchObject({ url: '/metrics', port: 8080 });
  });

  it('authorizes each method as its verb on the proxy subresource', async () => {
    const seen: string[] = [];
    const limited = await startTestServer({
      testDefinitions: false,
      policy: (attributes) => {
        if (attributes.subresource === 'proxy') seen.push(`${attributes.verb} ${attributes.resource}/${attributes.subresource}`);
        return attributes.verb === 'get' ? { decision: 'allow' } : undefined;
      },
    });
    try {
      const url = `${limited.info.url}${NS}/pods/web/proxy/x`;
      const post = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpsRequest(url, { method: 'POST', ca: limited.info.caPem, headers: { authorization: 'Bearer alice-token' } });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
        req.end('payload');
      });
      expect(post.status).toBe(403);
      expect(JSON.parse(post.text).message).toContain('cannot create resource "pods/proxy"');
      for (const method of ['PUT', 'PATCH', 'DELETE', 'GET', 'HEAD']) {
        await limited.request(method, `${NS}/pods/web/proxy/x`, { token: 'alice-token' });
      }
      expect(seen).toEqual(['create pods/proxy', 'update pods/proxy', 'patch pods/proxy', 'delete pods/proxy', 'get pods/proxy', 'get pods/proxy']);
    } finally {
      await limited.stop();
    }
  });

  it('answers kubectl get --raw and create --raw through a Service', async () => {
    const got = await kubectl(['get', '--raw', `${NS}/services/web:http/proxy/from-kubectl?x=1`]);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ method: 'GET', url: '/from-kubectl?x=1', port: 8080 });
    const created = await kubectl(['create', '--raw', `${NS}/pods/web/proxy/posted`, '-f', '-'], '{"hello":"pod"}');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ method: 'POST', url: '/posted', body: '{"hello":"pod"}' });
  });

  it('relays an upgrade to the pod and splices the connections', async () => {
    const outcome = await upgradeRequest(server.info, 'GET', `${NS}/pods/web/proxy/ws`, { upgrade: 'echo', authorization: 'Bearer admin-token' });
    expect(outcome.upgraded).toBe(true);
    if (!outcome.upgraded) return;
    const echoed = new Promise<string>((resolve) => outcome.socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    outcome.socket.write('ping through the proxy');
    expect(await echoed).toBe('ping through the proxy');
    outcome.socket.destroy();
  });
});
