import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errors } from '@skiff/api';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { receivedText, startTestRuntime, type TestRuntime } from '../test-support/test-runtime.js';
import { FakeNode, nodeConnectionsPlugin } from '../test-support/test-node.js';
import {
  eventually,
  firstChunk,
  forwardPing,
  rawExchange,
  spdySession,
  tunnelledSocket,
  upgradeRequest,
  webSocketClient,
  webSocketHeaders,
  type UpgradeOutcome,
} from '../test-support/test-clients.js';
import { SpdySession, type StreamEnd } from './spdy/session.js';

/** An error as the kubelet's are: its own class, saying which Status it is. */
class NodeSideError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeletError';
  }

  toStatus() {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: 'BadRequest', code: 400 };
  }
}

let runtime: TestRuntime;
const node = new FakeNode(() => runtime);
// Like the kubelet's, errors about the container come before the first byte.
const kubeletLogs: FakeNode['logs'] = (_signal, container, pod) => {
  if (container === 'waiting') throw new NodeSideError(`container "waiting" in pod "${pod.name}" is waiting to start: ContainerCreating`);
  if (container === 'b' && pod.name === 'two') throw errors.notFound('pods', '', pod.name);
  return (async function* () {
    yield Buffer.from('line 1\nline 2\n');
  })();
};
node.logs = kubeletLogs;
let nextToken = 'unset';
node.token = () => nextToken;

let server: TestServer;
const PODS = '/api/v1/namespaces/default/pods';

async function createPod(name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) {
  const created = await server.request('POST', PODS, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec } });
  expect(created.status).toBe(201);
}

beforeAll(async () => {
  runtime = await startTestRuntime();
  server = await startTestServer({ testDefinitions: false, plugins: [nodeConnectionsPlugin({ 'node-a': node })] });
  await createPod('web', { nodeName: 'node-a', containers: [{ name: 'app', image: 'busybox' }] });
  await createPod('pending', { containers: [{ name: 'app', image: 'busybox' }] });
  await createPod('stray', { nodeName: 'ghost', containers: [{ name: 'app', image: 'busybox' }] });
  await createPod('two', {
    nodeName: 'node-a',
    initContainers: [{ name: 'init', image: 'busybox' }],
    containers: [
      { name: 'a', image: 'busybox' },
      { name: 'b', image: 'busybox' },
      { name: 'waiting', image: 'busybox' },
    ],
  });
  await createPod(
    'annotated',
    {
      nodeName: 'node-a',
      containers: [
        { name: 'a', image: 'busybox' },
        { name: 'b', image: 'busybox' },
      ],
    },
    {
      'kubectl.kubernetes.io/default-container': 'b',
    },
  );
});
afterAll(async () => {
  await server?.stop();
  await runtime?.close();
});

const target = () => ({ url: server.info.url, caPem: server.info.caPem });
const ADMIN = { authorization: 'Bearer admin-token' };

describe('discovery', () => {
  it('lists pods/log, pods/exec, pods/attach and pods/portforward with upstream kinds and verbs', async () => {
    const { json } = await server.request('GET', '/api/v1');
    const find = (name: string) => json.resources.find((r: { name: string }) => r.name === name);
    expect(find('pods/log')).toMatchObject({ kind: 'Pod', verbs: ['get'] });
    expect(find('pods/exec')).toMatchObject({ kind: 'PodExecOptions', verbs: ['create', 'get'], namespaced: true });
    expect(find('pods/attach')).toMatchObject({ kind: 'PodAttachOptions', verbs: ['create', 'get'] });
    expect(find('pods/portforward')).toMatchObject({ kind: 'PodPortForwardOptions', verbs: ['create', 'get'] });
  });
});

describe('pods/log', () => {
  it('streams the container log as text/plain with the options parsed', async () => {
    const response = await server.request('GET', `${PODS}/web/log?follow=true&tailLines=5&timestamps=1&limitBytes=100&sinceSeconds=60`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.text).toBe('line 1\nline 2\n');
    expect(node.logCalls.at(-1)).toEqual({
      pod: { namespace: 'default', name: 'web', uid: expect.any(String) },
      container: 'app',
      options: { follow: true, previous: false, timestamps: true, tailLines: 5, limitBytes: 100, sinceSeconds: 60 },
    });
  });

  it('sends each chunk as it comes while following, and stops the node stream when the client goes', async () => {
    let release!: () => void;
    let stopped = false;
    node.logs = async function* (signal) {
      yield Buffer.from('first\n');
      await new Promise<void>((resolve) => {
        release = resolve;
        signal.addEventListener('abort', () => {
          stopped = true;
          resolve();
        });
      });
    };
    expect(await firstChunk(target(), `${PODS}/web/log?follow=true`, ADMIN)).toBe('first\n');
    await eventually(() => stopped);
    release();
  });

  it('ends the response where a log that breaks off mid-stream stopped', async () => {
    node.logs = async function* () {
      yield Buffer.from('partial\n');
      throw new Error('the disk went away');
    };
    const response = await server.request('GET', `${PODS}/web/log`);
    expect(response.status).toBe(200);
    expect(response.text).toBe('partial\n');
  });

  it('chooses the container as kube-apiserver does, or says why it cannot', async () => {
    node.logs = kubeletLogs;
    const multi = await server.request('GET', `${PODS}/two/log`);
    expect(multi.status).toBe(400);
    expect(multi.json).toMatchObject({ reason: 'BadRequest', message: 'a container name must be specified for pod two, choose one of: [init a b waiting]' });
    const unknown = await server.request('GET', `${PODS}/two/log?container=c`);
    expect(unknown.json).toMatchObject({ code: 400, message: 'container c is not valid for pod two' });
    expect((await server.request('GET', `${PODS}/two/log?container=init`)).status).toBe(200);
    expect((await server.request('GET', `${PODS}/annotated/log`)).status).toBe(200);
    expect(node.logCalls.at(-1)!.container).toBe('b');
  });

  it('answers 404 for a missing pod or its missing node, 400 for an unscheduled one, and passes the node’s Status on', async () => {
    expect((await server.request('GET', `${PODS}/absent/log`)).json).toMatchObject({ code: 404, message: 'pods "absent" not found' });
    expect((await server.request('GET', `${PODS}/pending/log`)).json).toMatchObject({ code: 400, message: 'pod pending does not have a host assigned' });
    // No kubelet of that node runs in this process, and no Node of that name exists to reach one at (kube-apiserver's answer).
    expect((await server.request('GET', `${PODS}/stray/log`)).json).toMatchObject({ code: 404, message: 'nodes "ghost" not found' });
    expect((await server.request('GET', `${PODS}/two/log?container=waiting`)).json).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'container "waiting" in pod "two" is waiting to start: ContainerCreating',
    });
    expect((await server.request('GET', `${PODS}/two/log?container=b`)).json).toMatchObject({ code: 404, reason: 'NotFound' });
  });

  it('checks PodLogOptions: 400 naming a malformed parameter, 422 for values out of range', async () => {
    expect((await server.request('GET', `${PODS}/web/log?tailLines=ten`)).json).toMatchObject({ code: 400, message: expect.stringContaining('tailLines') });
    expect((await server.request('GET', `${PODS}/web/log?sinceTime=yesterday`)).json).toMatchObject({
      code: 400,
      message: expect.stringContaining('sinceTime'),
    });
    const invalid = await server.request('GET', `${PODS}/web/log?tailLines=-1&limitBytes=0`);
    expect(invalid.json).toMatchObject({ code: 422, reason: 'Invalid', details: { kind: 'PodLogOptions', name: 'web' } });
    expect(invalid.json.message).toContain('tailLines: Invalid value: -1: must be greater than or equal to 0');
    expect(invalid.json.message).toContain('limitBytes: Invalid value: 0: must be greater than 0');
    const both = await server.request('GET', `${PODS}/web/log?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z`);
    expect(both.json.message).toContain('at most one of `sinceTime` or `sinceSeconds` may be specified');
  });
});

const execPath = (pod: string, query: string) => `${PODS}/${pod}/exec?${query}`;

describe('pods/log over WebSocket', () => {
  const open = async (protocols: string[], query = '') => {
    node.logs = kubeletLogs;
    const outcome = await upgradeRequest(target(), 'GET', `${PODS}/web/log${query}`, webSocketHeaders(protocols, 'admin-token'));
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const ws = webSocketClient(outcome.socket, outcome.head);
    await ws.ended;
    return { ws, protocol: outcome.response.headers['sec-websocket-protocol'] };
  };

  it('sends the log as binary messages after an empty one, then closes normally (binary.k8s.io, as the conformance test asks)', async () => {
    const { ws, protocol } = await open(['binary.k8s.io'], '?container=app');
    expect(protocol).toBe('binary.k8s.io');
    expect(ws.messages.map((message) => message.binary)).toEqual([true, true]);
    expect(ws.messages[0]!.data.length).toBe(0);
    expect(Buffer.concat(ws.messages.map((message) => message.data)).toString()).toBe('line 1\nline 2\n');
    expect(ws.closeCode).toBe(1000);
    expect(node.logCalls.at(-1)).toMatchObject({ container: 'app', options: { follow: false } });
  });

  it('sends base64 text for base64.binary.k8s.io, and raw bytes when no subprotocol is offered', async () => {
    const base64 = await open(['base64.binary.k8s.io']);
    expect(base64.protocol).toBe('base64.binary.k8s.io');
    expect(base64.ws.messages.every((message) => !message.binary)).toBe(true);
    expect(base64.ws.messages.map((message) => Buffer.from(message.data.toString(), 'base64').toString()).join('')).toBe('line 1\nline 2\n');
    const plain = await open([]);
    expect(plain.protocol).toBeUndefined();
    expect(Buffer.concat(plain.ws.messages.map((message) => message.data)).toString()).toBe('line 1\nline 2\n');
  });

  it('refuses unsupported subprotocols, and checks the pod and container before upgrading', async () => {
    const refused = await upgradeRequest(target(), 'GET', `${PODS}/web/log`, webSocketHeaders(['v4.channel.k8s.io'], 'admin-token'));
    expect(refused).toMatchObject({ upgraded: false, status: 403 });
    const missing = await upgradeRequest(target(), 'GET', `${PODS}/web/log?container=nope`, webSocketHeaders(['binary.k8s.io'], 'admin-token'));
    expect(missing).toMatchObject({ upgraded: false, status: 400, body: { message: 'container nope is not valid for pod web' } });
  });

  it('stops following the log when the client closes', async () => {
    let stopped = false;
    node.logs = async function* (signal) {
      yield Buffer.from('first\n');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      stopped = true;
    };
    const outcome = await upgradeRequest(target(), 'GET', `${PODS}/web/log?follow=true`, webSocketHeaders(['binary.k8s.io'], 'admin-token'));
    if (!outcome.upgraded) throw new Error('not upgraded');
    const ws = webSocketClient(outcome.socket, outcome.head);
    await eventually(() => ws.messages.some((message) => message.data.toString() === 'first\n'));
    ws.close();
    await eventually(() => stopped);
    outcome.socket.destroy();
    node.logs = kubeletLogs;
  });
});

describe('upgrade requests', () => {
  it('run authentication first: a bad token gets a 401 Status and no upgrade', async () => {
    const before = runtime.requests.length;
    const outcome = await upgradeRequest(target(), 'GET', execPath('web', 'command=ls&stdout=true'), webSocketHeaders(['v5.channel.k8s.io'], 'wrong-token'));
    expect(outcome).toMatchObject({ upgraded: false, status: 401, body: { kind: 'Status', reason: 'Unauthorized' } });
    expect(runtime.requests.length).toBe(before);
  });

  it('need create on the subresource, also for the WebSocket GET', async () => {
    const outcome = await upgradeRequest(target(), 'GET', execPath('web', 'command=ls&stdout=true'), webSocketHeaders(['v5.channel.k8s.io'], 'alice-token'));
    expect(outcome).toMatchObject({ upgraded: false, status: 403 });
    expect((outcome as { body: { message: string } }).body.message).toContain('cannot create resource "pods/exec"');
  });

  it('answer a request without upgrade headers with 400 Upgrade request required', async () => {
    expect((await server.request('GET', execPath('web', 'command=ls&stdout=true'))).json).toMatchObject({ code: 400, message: 'Upgrade request required' });
    expect((await server.request('POST', `${PODS}/web/portforward`)).json).toMatchObject({ code: 400, message: 'Upgrade request required' });
  });

  it('answer an ordinary request that carries upgrade headers on the raw socket, then close', async () => {
    const answer = await rawExchange(
      target(),
      `GET ${PODS}/web HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer admin-token\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('connection: close');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ kind: 'Pod', metadata: { name: 'web' } });
  });

  it('check exec and attach options before reaching the node', async () => {
    const ws = (path: string, protocols = ['v5.channel.k8s.io']) => upgradeRequest(target(), 'GET', path, webSocketHeaders(protocols, 'admin-token'));
    const statusOf = (outcome: UpgradeOutcome) => (outcome.upgraded ? 101 : [outcome.status, outcome.body?.message]);
    expect(statusOf(await ws(execPath('web', 'stdout=true')))).toEqual([400, 'you must specify at least one command for the container']);
    expect(statusOf(await ws(execPath('web', 'command=ls')))).toEqual([400, 'you must specify at least 1 of stdin, stdout, stderr']);
    expect(statusOf(await ws(execPath('two', 'command=ls&stdout=true')))).toEqual([
      400,
      'a container name must be specified for pod two, choose one of: [init a b waiting]',
    ]);
    expect(statusOf(await ws(execPath('pending', 'command=ls&stdout=true')))).toEqual([400, 'pod pending does not have a host assigned']);
    expect(statusOf(await ws(execPath('absent', 'command=ls&stdout=true')))).toEqual([404, 'pods "absent" not found']);
    expect(statusOf(await ws(execPath('web', 'command=ls&stdout=true'), ['v9.channel.k8s.io']))).toEqual([
      400,
      expect.stringContaining('no supported websocket subprotocol'),
    ]);
    expect(statusOf(await ws(`${PODS}/web/portforward?ports=0`, ['SPDY/3.1+portforward.k8s.io']))).toEqual([400, expect.stringContaining('invalid port "0"')]);
    expect(statusOf(await ws(`${PODS}/web/portforward?ports=80`, ['v5.channel.k8s.io']))).toEqual([
      400,
      expect.stringContaining('no tunneling spdy protocols'),
    ]);
  });
});

/** Opens the v4 remotecommand streams on a session, collecting what comes back. */
async function remoteCommandStreams(session: SpdySession, types: string[]) {
  const out: Record<string, string> = {};
  const ends: Record<string, StreamEnd> = {};
  const streams: Record<string, Awaited<ReturnType<SpdySession['openStream']>>> = {};
  for (const type of types) {
    out[type] = '';
    streams[type] = await session.openStream({ streamtype: type }, { data: (chunk) => (out[type] += chunk.toString()), end: (how) => (ends[type] = how) });
  }
  return { out, ends, streams };
}

describe('exec over SPDY (kubectl before 1.30, and the fallback of every kubectl)', () => {
  it('passes the session through to the runtime, which chooses the protocol', async () => {
    nextToken = 'spdy-exec';
    runtime.expect('exec', 'spdy-exec', ['error', 'stdin', 'stdout', 'stderr'], async (streams, session) => {
      await session.ended('stdin');
      streams.get('stdout')!.write(Buffer.from(`got ${receivedText(streams.get('stdin'))}`));
      return 3;
    });
    const outcome = await upgradeRequest(target(), 'POST', execPath('web', 'command=sh&command=-c&command=exit%203&stdin=true&stdout=true&stderr=true'), {
      ...ADMIN,
      upgrade: 'SPDY/3.1',
      'x-stream-protocol-version': ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io'],
    });
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io');
    const session = spdySession(outcome.socket, outcome.head);
    const { out, streams } = await remoteCommandStreams(session, ['error', 'stdin', 'stdout', 'stderr']);
    streams.stdin!.write(Buffer.from('input'));
    streams.stdin!.end();
    await session.closed;
    expect(out.stdout).toBe('got input');
    expect(JSON.parse(out.error!)).toMatchObject({ reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
    // The runtime saw the client's protocol versions, one header line each, on its own path.
    const seen = runtime.requests.at(-1)!;
    expect(seen).toMatchObject({ method: 'POST', url: '/exec/spdy-exec' });
    expect(seen.headers['x-stream-protocol-version']).toBe('v5.channel.k8s.io, v4.channel.k8s.io, channel.k8s.io');
    expect(node.streamCalls.at(-1)).toMatchObject({
      kind: 'exec',
      container: 'app',
      request: { cmd: ['sh', '-c', 'exit 3'], stdin: true, stdout: true, stderr: true, tty: false },
    });
  });

  it('answers the runtime’s refusal as a Status', async () => {
    nextToken = 'expired';
    const outcome = await upgradeRequest(target(), 'POST', execPath('web', 'command=ls&stdout=true'), {
      ...ADMIN,
      upgrade: 'SPDY/3.1',
      'x-stream-protocol-version': 'v4.channel.k8s.io',
    });
    expect(outcome).toMatchObject({
      upgraded: false,
      status: 404,
      body: { kind: 'Status', message: 'unable to upgrade connection: invalid or expired token' },
    });
  });
});

describe('exec and attach over WebSocket (kubectl 1.30+)', () => {
  it('translates v5 channels to the runtime’s SPDY streams and the exit code to the status channel', async () => {
    nextToken = 'ws-exec';
    runtime.expect('exec', 'ws-exec', ['error', 'stdin', 'stdout', 'stderr'], async (streams, session) => {
      await session.ended('stdin');
      streams.get('stdout')!.write(Buffer.from(receivedText(streams.get('stdin')).toUpperCase()));
      streams.get('stderr')!.write(Buffer.from('to stderr'));
      return 3;
    });
    const outcome = await upgradeRequest(
      target(),
      'GET',
      execPath('web', 'command=sh&command=-c&command=exit%203&container=app&stdin=true&stdout=true&stderr=true'),
      webSocketHeaders(['v5.channel.k8s.io'], 'admin-token'),
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.headers['sec-websocket-protocol']).toBe('v5.channel.k8s.io');
    const ws = webSocketClient(outcome.socket, outcome.head);
    ws.send(Buffer.from([0, ...Buffer.from('abc')]));
    ws.send(Buffer.from([0, ...Buffer.from('def')]));
    ws.send(Buffer.from([255, 0]));
    await ws.ended;
    const byChannel = (channel: number) => Buffer.concat(ws.messages.filter((m) => m.data[0] === channel).map((m) => m.data.subarray(1))).toString();
    expect(byChannel(1)).toBe('ABCDEF');
    expect(byChannel(2)).toBe('to stderr');
    expect(JSON.parse(byChannel(3))).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect(ws.messages.at(-1)!.data[0]).toBe(3);
    expect(ws.closeCode).toBe(1000);
    expect(runtime.requests.at(-1)!.headers['x-stream-protocol-version']).toBe('v4.channel.k8s.io');
  });

  it('serves channel.k8s.io as the conformance test reads it: output on channel 1, nothing but empty messages elsewhere', async () => {
    nextToken = 'ws-v1';
    runtime.expect('exec', 'ws-v1', ['error', 'stdout', 'stderr'], async (streams) => {
      streams.get('stdout')!.write(Buffer.from('remote execution test\n'));
      return 0;
    });
    const outcome = await upgradeRequest(
      target(),
      'GET',
      execPath('web', 'stderr=1&stdout=1&container=app&command=echo&command=remote%20execution%20test'),
      webSocketHeaders(['channel.k8s.io'], 'admin-token'),
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.headers['sec-websocket-protocol']).toBe('channel.k8s.io');
    const ws = webSocketClient(outcome.socket, outcome.head);
    await ws.ended;
    const stdout = ws.messages.filter((m) => m.data[0] === 1);
    expect(Buffer.concat(stdout.map((m) => m.data.subarray(1))).toString()).toBe('remote execution test\n');
    expect(ws.messages.filter((m) => m.data.length > 0 && m.data[0] !== 1).every((m) => m.data.length === 1)).toBe(true);
    expect(node.streamCalls.at(-1)!.request).toMatchObject({ cmd: ['echo', 'remote execution test'], stdout: true, stderr: true, stdin: false });
  });

  it('relays resize messages with a terminal and opens no stderr stream', async () => {
    nextToken = 'ws-tty';
    let resized = '';
    runtime.expect('exec', 'ws-tty', ['error', 'stdin', 'stdout', 'resize'], async (streams, session) => {
      await session.ended('stdin');
      resized = receivedText(streams.get('resize'));
      expect(streams.has('stderr')).toBe(false);
      streams.get('stdout')!.write(Buffer.from('$ '));
      return 0;
    });
    const outcome = await upgradeRequest(
      target(),
      'GET',
      execPath('web', 'command=sh&stdin=true&stdout=true&stderr=true&tty=true'),
      webSocketHeaders(['v5.channel.k8s.io'], 'admin-token'),
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const ws = webSocketClient(outcome.socket, outcome.head);
    ws.send(Buffer.from([4, ...Buffer.from('{"Width":80,"Height":24}')]));
    ws.send(Buffer.from([255, 0]));
    await ws.ended;
    expect(resized).toBe('{"Width":80,"Height":24}');
    expect(ws.messages.map((m) => m.data[0])).toEqual([1, 3]);
    expect(JSON.parse(ws.messages[1]!.data.subarray(1).toString())).toMatchObject({ status: 'Success' });
    expect(node.streamCalls.at(-1)!.request).toMatchObject({ tty: true, stderr: false });
  });

  it('speaks the base64 protocols in text messages (attach, v4.base64.channel.k8s.io)', async () => {
    nextToken = 'ws-attach';
    runtime.expect('attach', 'ws-attach', ['error', 'stdout'], async (streams) => {
      streams.get('stdout')!.write(Buffer.from('attached output'));
      return 0;
    });
    const outcome = await upgradeRequest(
      target(),
      'GET',
      `${PODS}/web/attach?container=app&stdout=true`,
      webSocketHeaders(['v4.base64.channel.k8s.io', 'base64.channel.k8s.io'], 'admin-token'),
    );
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.headers['sec-websocket-protocol']).toBe('v4.base64.channel.k8s.io');
    const ws = webSocketClient(outcome.socket, outcome.head);
    await ws.ended;
    const stdout = ws.messages.find((m) => m.data.toString().startsWith('1'))!;
    expect(stdout.binary).toBe(false);
    expect(Buffer.from(stdout.data.toString().slice(1), 'base64').toString()).toBe('attached output');
    expect(node.streamCalls.at(-1)).toMatchObject({ kind: 'attach', request: { stdout: true, stdin: false } });
    expect(node.streamCalls.at(-1)!.request).not.toHaveProperty('cmd');
  });

  it('refuses before the handshake when the runtime does, so kubectl can fall back', async () => {
    nextToken = 'gone';
    const outcome = await upgradeRequest(target(), 'GET', execPath('web', 'command=ls&stdout=true'), webSocketHeaders(['v5.channel.k8s.io'], 'admin-token'));
    expect(outcome).toMatchObject({ upgraded: false, status: 404, body: { message: 'unable to upgrade connection: invalid or expired token' } });
  });
});

describe('port-forward', () => {
  const echo =
    (requestId: string) => async (streams: Map<string, { received: Buffer[]; write(data: Buffer): void }>, session: { ended(type: string): Promise<void> }) => {
      await session.ended('data');
      streams.get(`data:${requestId}`)!.write(Buffer.from(`echo:${receivedText(streams.get(`data:${requestId}`) as never)}`));
      return 0;
    };

  it('tunnels SPDY inside WebSocket binary messages (kubectl 1.31+)', async () => {
    nextToken = 'ws-pf';
    runtime.expect('portforward', 'ws-pf', ['error:0', 'data:0'], echo('0') as never);
    const outcome = await upgradeRequest(target(), 'GET', `${PODS}/web/portforward?ports=80`, webSocketHeaders(['SPDY/3.1+portforward.k8s.io'], 'admin-token'));
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    expect(outcome.response.headers['sec-websocket-protocol']).toBe('SPDY/3.1+portforward.k8s.io');
    const ws = webSocketClient(outcome.socket, outcome.head);
    const session = new SpdySession(tunnelledSocket(ws));
    expect(await forwardPing(session)).toBe('echo:ping');
    expect(ws.messages.every((m) => m.binary)).toBe(true);
    expect(runtime.requests.at(-1)).toMatchObject({
      method: 'POST',
      url: '/portforward/ws-pf',
      headers: { 'x-stream-protocol-version': 'portforward.k8s.io' },
    });
    expect(node.portForwardCalls.at(-1)).toMatchObject({ pod: { name: 'web' }, ports: [80] });
    session.close();
  });

  it('passes SPDY through (kubectl before 1.31, and the fallback)', async () => {
    nextToken = 'spdy-pf';
    runtime.expect('portforward', 'spdy-pf', ['error:0', 'data:0'], echo('0') as never);
    const outcome = await upgradeRequest(target(), 'POST', `${PODS}/web/portforward`, {
      ...ADMIN,
      upgrade: 'SPDY/3.1',
      'x-stream-protocol-version': 'portforward.k8s.io',
    });
    if (!outcome.upgraded) throw new Error(`not upgraded: ${outcome.status} ${outcome.text}`);
    const session = spdySession(outcome.socket, outcome.head);
    expect(await forwardPing(session)).toBe('echo:ping');
    expect(node.portForwardCalls.at(-1)!.ports).toEqual([]);
    session.close();
  });
});
