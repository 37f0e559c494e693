import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod, type ResourceType, type SubjectAccessReview, type SubjectAccessReviewSpec, type TokenReview } from '@skiff/api';
import { createMetricsRegistry, METRICS_CONTENT_TYPE, type ApiClient, type ContainerRuntime } from '@skiff/kernel';
import { KubeletMetrics } from '../metrics.js';
import { KubeletNodeConnection } from '../streaming/node-connection.js';
import { boundPod, silentLogger } from '../test-support/objects.js';
import { KubeletServer, type KubeletServerOptions } from './kubelet-server.js';
import {
  exchange,
  follow,
  httpsGet,
  runPod,
  startStandInStreaming,
  streamingRuntime,
  testPki,
  upgrade,
  type Credentials,
  type StandInStreaming,
  type TestPki,
} from './test-support.js';

// The kubelet's HTTPS API on 127.0.0.1 with real certificates, over the kubelet's node connection to the
// simulated runtime (streams go to a stand-in streaming server). The API server's reviews are answered by a
// recording stand-in here; remote-kubelet.test.ts asks a real API server.

const USERS: Record<string, { username: string; groups: string[] }> = {
  'good-token': { username: 'alice', groups: ['developers', 'system:authenticated'] },
  'viewer-token': { username: 'viewer', groups: ['system:authenticated'] },
  'broken-token': { username: 'broken', groups: ['system:authenticated'] },
};

/** The API server's answers to the kubelet's reviews: viewer may read stats only, broken's reviews fail. */
class Reviewer implements Pick<ApiClient, 'create'> {
  readonly tokenReviews: string[] = [];
  readonly accessReviews: SubjectAccessReviewSpec[] = [];

  async create<T>(type: ResourceType, object: T): Promise<T> {
    if (type.resource === RESOURCES.tokenreviews.resource) {
      const review = object as TokenReview;
      this.tokenReviews.push(review.spec.token);
      const user = USERS[review.spec.token];
      return { ...review, status: user ? { authenticated: true, user } : { authenticated: false, error: 'invalid bearer token' } } as T;
    }
    const review = object as SubjectAccessReview;
    this.accessReviews.push(review.spec);
    if (review.spec.user === 'broken') throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
    const allowed = review.spec.user !== 'viewer' || review.spec.resourceAttributes?.subresource === 'stats';
    return { ...review, status: { allowed } } as T;
  }
}

const NODE = 'node-1';
const FAST = { pollMs: 20, statusMs: 20 };

let dir: string;
let pki: TestPki;
let streaming: StandInStreaming;
let runtime: ContainerRuntime;
let server: KubeletServer;
let base: string;
let containerId: string;
let sandboxId: string;
const reviewer = new Reviewer();
const web: Pod = {
  ...boundPod('web', {
    containers: [
      { name: 'app', image: 'nginx:1.27' },
      { name: 'later', image: 'nginx:1.27' },
    ],
  }),
  status: {
    phase: 'Running',
    startTime: '2026-03-01T10:00:00Z',
    containerStatuses: [
      { name: 'app', image: 'nginx:1.27', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-03-01T10:00:01Z' } } },
      { name: 'later', image: 'nginx:1.27', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
    ],
  },
};
const pending = boundPod('pending');
const pods = [web, pending];
let admin: Credentials;

/** A kubelet server on a free port of 127.0.0.1 for these pods, with the test's certificates and reviewer. */
async function startServer(
  options: Pick<KubeletServerOptions, 'connection'> & Partial<KubeletServerOptions>,
): Promise<{ server: KubeletServer; base: string }> {
  const started = new KubeletServer({
    nodeName: NODE,
    pods: () => pods,
    client: reviewer,
    tls: { ...pki.serving, clientCaPem: pki.caPem },
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger,
    ...options,
  });
  return { server: started, base: `https://127.0.0.1:${await started.listen()}` };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-kubelet-server-'));
  pki = testPki(join(dir, 'ca'));
  streaming = await startStandInStreaming();
  runtime = await streamingRuntime(join(dir, 'runtime'), streaming);
  ({ containerId, sandboxId } = await runPod(runtime, dir, { namespace: 'default', name: 'web', uid: 'uid-web' }, 'app'));
  const connection = new KubeletNodeConnection({
    nodeName: NODE,
    runtime,
    pod: (namespace, name) => pods.find((pod) => pod.metadata.namespace === namespace && pod.metadata.name === name),
    timing: FAST,
  });
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  new KubeletMetrics(metrics).countRunning(runtime);
  ({ server, base } = await startServer({ connection, startTime: new Date('2026-03-01T09:00:00.250Z'), metrics }));
  const client = pki.client('kube-apiserver-kubelet-client', ['system:masters']);
  admin = { ca: pki.caPem, cert: client.certPem, key: client.keyPem };
});
afterAll(async () => {
  await server?.close();
  await streaming?.close();
  await runtime?.close?.();
  await rm(dir, { recursive: true, force: true });
});

const token = (name: string): Credentials => ({ ca: pki.caPem, token: name });

describe('authentication', () => {
  it('takes a client certificate from the client CA: CN the user, O the groups', async () => {
    const answer = await httpsGet(`${base}/healthz`, admin);
    expect(answer).toMatchObject({ status: 200, text: 'ok' });
    expect(reviewer.accessReviews.at(-1)).toEqual({
      user: 'kube-apiserver-kubelet-client',
      groups: ['system:masters', 'system:authenticated'],
      resourceAttributes: { verb: 'get', group: '', version: 'v1', resource: 'nodes', subresource: 'proxy', name: NODE },
    });
  });

  it('answers 401 without credentials, or with a certificate from another CA, unless a bearer token authenticates', async () => {
    expect(await httpsGet(`${base}/healthz`, { ca: pki.caPem })).toMatchObject({ status: 401, text: 'Unauthorized' });
    const stranger = testPki(join(dir, 'other-ca')).client('kube-apiserver-kubelet-client', ['system:masters']);
    const foreign = { ca: pki.caPem, cert: stranger.certPem, key: stranger.keyPem };
    expect(await httpsGet(`${base}/healthz`, foreign)).toMatchObject({ status: 401, text: 'Unauthorized' });
    expect(await httpsGet(`${base}/healthz`, { ...foreign, token: 'good-token' })).toMatchObject({ status: 200, text: 'ok' });
    expect(reviewer.accessReviews.at(-1)).toMatchObject({ user: 'alice', groups: ['developers', 'system:authenticated'] });
  });

  it('reviews a bearer token with the API server once, then keeps the answer; an unknown token is a 401', async () => {
    const before = reviewer.tokenReviews.length;
    expect((await httpsGet(`${base}/pods`, token('good-token'))).status).toBe(200);
    expect((await httpsGet(`${base}/pods`, token('good-token'))).status).toBe(200);
    expect(await httpsGet(`${base}/pods`, token('stolen-token'))).toMatchObject({ status: 401, text: 'Unauthorized' });
    expect(reviewer.tokenReviews.slice(before)).toEqual(['stolen-token']);
  });
});

describe('authorization', () => {
  it('asks about the node subresource of the path, as upstream maps them, with the verb of the method', async () => {
    const { server: uncached, base: uncachedBase } = await startServer({
      connection: new KubeletNodeConnection({ nodeName: NODE, runtime }),
      cacheTtls: { authorizedMs: 0, unauthorizedMs: 0 },
    });
    const asked: [string, string, string][] = [
      ['GET', '/stats/summary', 'stats'],
      ['GET', '/stats', 'stats'],
      ['GET', '/metrics', 'metrics'],
      ['GET', '/metrics/cadvisor', 'metrics'],
      ['GET', '/metricsz', 'proxy'],
      ['GET', '/logs/syslog', 'log'],
      ['GET', '/spec/', 'spec'],
      ['GET', '/containerLogs/default/web/app', 'proxy'],
      ['HEAD', '/pods', 'proxy'],
      ['PUT', '/pods', 'proxy'],
      ['PATCH', '/pods', 'proxy'],
      ['DELETE', '/pods', 'proxy'],
      ['POST', '/exec/default/web/app', 'proxy'],
    ];
    const seen: [string, string | undefined, string | undefined][] = [];
    for (const [method, path] of asked) {
      await httpsGet(`${uncachedBase}${path}`, admin, method);
      const { verb, subresource } = reviewer.accessReviews.at(-1)!.resourceAttributes!;
      seen.push([method, verb, subresource]);
    }
    const VERBS: Record<string, string> = { GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete', POST: 'create' };
    expect(seen).toEqual(asked.map(([method, , subresource]) => [method, VERBS[method], subresource]));
    await uncached.close();
  });

  it('answers 403 in upstream words when the API server says no, and keeps answers a while', async () => {
    expect(await httpsGet(`${base}/pods`, token('viewer-token'))).toMatchObject({
      status: 403,
      text: 'Forbidden (user=viewer, verb=get, resource=nodes, subresource=proxy)',
    });
    expect((await httpsGet(`${base}/stats/summary`, token('viewer-token'))).status).toBe(200);
    const before = reviewer.accessReviews.length;
    expect((await httpsGet(`${base}/pods`, token('viewer-token'))).status).toBe(403);
    expect((await httpsGet(`${base}/stats/summary`, token('viewer-token'))).status).toBe(200);
    expect(reviewer.accessReviews.length).toBe(before);
  });

  it('answers 500 when the review cannot be made', async () => {
    expect(await httpsGet(`${base}/pods`, token('broken-token'))).toMatchObject({
      status: 500,
      text: 'Authorization error (user=broken, verb=get, resource=nodes, subresource=proxy)',
    });
  });
});

describe('pods and stats', () => {
  it("answers /metrics from the kernel's registry: the running pods and containers the runtime reports", async () => {
    const answer = await httpsGet(`${base}/metrics`, admin);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe(METRICS_CONTENT_TYPE);
    expect(answer.text).toMatch(/^kubelet_running_pods 1$/m);
    expect(answer.text).toMatch(/^kubelet_running_containers\{container_state="running"\} 1$/m);
  });

  it('lists the pods of the node as a PodList', async () => {
    const answer = await httpsGet(`${base}/pods`, admin);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(JSON.parse(answer.text)).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods });
  });

  it('answers a Summary with the node and the pods it started, their running containers, and no invented figures', async () => {
    const answer = await httpsGet(`${base}/stats/summary`, admin);
    expect(JSON.parse(answer.text)).toEqual({
      node: { nodeName: NODE, startTime: '2026-03-01T09:00:00Z' },
      pods: [
        {
          podRef: { name: 'web', namespace: 'default', uid: 'uid-web' },
          startTime: '2026-03-01T10:00:00Z',
          containers: [{ name: 'app', startTime: '2026-03-01T10:00:01Z' }],
        },
      ],
    });
  });

  it('answers unknown paths 404 and other methods 405, after authorization', async () => {
    expect(await httpsGet(`${base}/configz`, admin)).toMatchObject({ status: 404, text: '404 page not found' });
    expect(await httpsGet(`${base}/pods`, admin, 'DELETE')).toMatchObject({ status: 405 });
    expect((await httpsGet(`${base}/configz`, { ca: pki.caPem })).status).toBe(401);
  });
});

describe('container logs', () => {
  const logs = (query = '', container = 'app', pod = 'web') => httpsGet(`${base}/containerLogs/default/${pod}/${container}${query}`, admin);

  it('reads the log of the container the kubelet runs for the pod', async () => {
    const answer = await logs();
    expect(answer).toMatchObject({ status: 200, text: 'simulated container app started (image nginx:1.27)\n' });
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect((await logs('?tailLines=0')).text).toBe('');
    expect((await logs('?tail=all')).text).toBe('simulated container app started (image nginx:1.27)\n');
    expect((await logs('?timestamps=true')).text).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z simulated container app started/);
    expect((await logs('?limitBytes=9')).text).toBe('simulated');
  });

  it('follows the log as it grows, chunk by chunk', async () => {
    const logPath = (await runtime.containerStatus(containerId))!.logPath!;
    const followed = await follow(`${base}/containerLogs/default/web/app?follow=true`, admin);
    expect(followed.status).toBe(200);
    const started = 'simulated container app started (image nginx:1.27)\n';
    await expect.poll(() => followed.text()).toBe(started);
    await appendFile(logPath, '2026-03-01T10:00:00.5Z stdout F first followed line\n');
    await expect.poll(() => followed.text()).toBe(`${started}first followed line\n`);
    await appendFile(logPath, '2026-03-01T10:00:01.5Z stderr F second followed line\n');
    await expect.poll(() => followed.text()).toBe(`${started}first followed line\nsecond followed line\n`);
    followed.close();
  });

  it('answers what the kubelet cannot serve as upstream does, in plain text', async () => {
    expect(await logs('', 'app', 'absent')).toMatchObject({ status: 404, text: 'pod "absent" does not exist' });
    expect(await logs('', 'nope')).toMatchObject({ status: 404, text: 'container "nope" not found in pod "web"' });
    expect(await logs('', 'later')).toMatchObject({ status: 400, text: 'container "later" in pod "web" is waiting to start: ContainerCreating' });
    expect(await logs('?tailLines=ten')).toMatchObject({ status: 400, text: expect.stringContaining('tailLines') });
    expect(await logs('?tailLines=-1')).toMatchObject({ status: 422, text: expect.stringContaining('tailLines: Invalid value: -1') });
    expect(await logs('?sinceSeconds=5&sinceTime=2026-03-01T10:00:00Z')).toMatchObject({ status: 422 });
  });
});

describe('exec, attach and port-forward', () => {
  it('proxies an exec upgrade to the runtime and then carries bytes both ways', async () => {
    const outcome = await upgrade(`${base}/exec/default/web/app?command=sh&command=-c&command=date&input=1&output=1&tty=1`, admin);
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.statusCode).toBe(101);
    expect(outcome.response.headers).toMatchObject({ upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v4.channel.k8s.io' });
    expect(await exchange(outcome.socket, 'hello runtime', 'HELLO RUNTIME'.length, outcome.head)).toBe('HELLO RUNTIME');
    outcome.socket.destroy();
    const asked = streaming.requests.at(-1)!;
    expect(asked.method).toBe('POST');
    expect(asked.url).toBe(`/exec/${containerId}?cmd=sh%20-c%20date&tty=true`);
    expect(asked.headers).toMatchObject({ upgrade: 'SPDY/3.1', connection: 'Upgrade', 'x-stream-protocol-version': 'v4.channel.k8s.io, v3.channel.k8s.io' });
    // The client's credentials stay with the kubelet.
    expect(asked.headers.authorization).toBeUndefined();
  });

  it("takes the API server's parameter names and a pod uid in the path; a uid the pod no longer has is a 404", async () => {
    const outcome = await upgrade(`${base}/exec/default/web/uid-web/app?command=ls&stdout=1&stderr=1`, admin);
    expect(outcome.upgraded).toBe(true);
    if (outcome.upgraded) outcome.socket.destroy();
    expect(streaming.requests.at(-1)!.url).toBe(`/exec/${containerId}?cmd=ls&tty=false`);
    expect(await upgrade(`${base}/exec/default/web/uid-old/app?command=ls&stdout=1`, admin)).toMatchObject({
      upgraded: false,
      status: 404,
      text: 'container not found ("app")',
    });
  });

  it('proxies attach over WebSocket with the handshake headers, and port-forward with its ports', async () => {
    const ws = await upgrade(
      `${base}/attach/default/web/app?output=1`,
      admin,
      {
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-protocol': 'v5.channel.k8s.io',
      },
      'GET',
    );
    expect(ws.upgraded).toBe(true);
    if (ws.upgraded) ws.socket.destroy();
    expect(streaming.requests.at(-1)).toMatchObject({
      method: 'GET',
      url: `/attach/${containerId}`,
      headers: { upgrade: 'websocket', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-protocol': 'v5.channel.k8s.io' },
    });
    const forward = await upgrade(`${base}/portForward/default/web?port=8080&port=9090`, admin, { 'x-stream-protocol-version': 'portforward.k8s.io' });
    if (!forward.upgraded) throw new Error(`not upgraded: ${forward.status} ${forward.text}`);
    expect(await exchange(forward.socket, 'data', 4, forward.head)).toBe('DATA');
    forward.socket.destroy();
    expect(streaming.requests.at(-1)!.url).toBe(`/portforward/${sandboxId}?ports=8080,9090`);
  });

  it("relays the runtime's refusal, and refuses requests it cannot serve", async () => {
    streaming.refuseNext(404, 'invalid or expired token');
    expect(await upgrade(`${base}/exec/default/web/app?command=ls&output=1`, admin)).toMatchObject({
      upgraded: false,
      status: 404,
      text: 'invalid or expired token',
    });
    expect(await httpsGet(`${base}/exec/default/web/app?command=ls&output=1`, admin, 'POST')).toMatchObject({ status: 400, text: 'Upgrade request required' });
    expect(await upgrade(`${base}/exec/default/web/app?command=ls`, admin)).toMatchObject({
      upgraded: false,
      status: 400,
      text: 'you must specify at least 1 of stdin, stdout, stderr',
    });
    expect(await upgrade(`${base}/exec/default/absent/app?command=ls&output=1`, admin)).toMatchObject({
      upgraded: false,
      status: 404,
      text: 'pod does not exist',
    });
    expect(await upgrade(`${base}/exec/default/web/later?command=ls&output=1`, admin)).toMatchObject({
      upgraded: false,
      status: 404,
      text: 'container not found ("later")',
    });
    expect(await upgrade(`${base}/exec/default/web/app?command=ls&output=1`, { ca: pki.caPem })).toMatchObject({
      upgraded: false,
      status: 401,
      text: 'Unauthorized',
    });
    expect(await upgrade(`${base}/exec/default/web/app?command=ls&output=1`, token('viewer-token'))).toMatchObject({
      upgraded: false,
      status: 403,
      text: 'Forbidden (user=viewer, verb=create, resource=nodes, subresource=proxy)',
    });
  });
});

describe('the serving certificate', () => {
  it('serves new connections with a rotated certificate', async () => {
    const next = testPki(join(dir, 'next-ca'));
    server.setServingCertificate(next.serving);
    expect((await httpsGet(`${base}/healthz`, { ...admin, ca: next.caPem })).status).toBe(200);
    await expect(httpsGet(`${base}/healthz`, admin)).rejects.toThrow(/certificate/);
    server.setServingCertificate(pki.serving);
    expect((await httpsGet(`${base}/healthz`, admin)).status).toBe(200);
  });

  it('asks for a client certificate without requiring one', async () => {
    const url = new URL(base);
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: pki.caPem, servername: 'localhost' });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    expect(socket.authorized).toBe(true);
    socket.destroy();
  });
});

describe('closing', () => {
  it('ends open log reads and streams', async () => {
    const { server: closing, base: closingBase } = await startServer({ connection: new KubeletNodeConnection({ nodeName: NODE, runtime, timing: FAST }) });
    const stream = await upgrade(`${closingBase}/exec/default/web/app?command=sh&input=1`, admin);
    if (!stream.upgraded) throw new Error(`not upgraded: ${stream.status} ${stream.text}`);
    const streamClosed = new Promise((resolve) => stream.socket.once('close', resolve));
    const following = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpsRequest(`${closingBase}/containerLogs/default/web/app?follow=true`, { ...admin, agent: false }, (res) =>
        res.once('data', () => resolve(res)),
      );
      request.on('error', reject);
      request.end();
    });
    const logEnded = new Promise((resolve) => following.once('close', resolve));
    following.resume();
    await closing.close();
    await Promise.all([streamClosed, logEnded]);
  });
});
