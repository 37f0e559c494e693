import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdmissionError, definePlugin, type AdmissionRequest, type StreamRequest } from '@skiff/kernel';
import { startTestServer, type TestServer } from '../test-support/cluster.js';
import { eventually } from '../test-support/test-clients.js';
import { FakeNode, nodeConnectionsPlugin } from '../test-support/test-node.js';
import { receivedText, startTestRuntime, type Script, type TestRuntime } from '../test-support/test-runtime.js';

// The real kubectl (the one on PATH) against the API server and a stand-in runtime: exec and port-forward over
// WebSocket (its default) and over SPDY (its fallback, forced with kubectl's own switches), and logs.

const adminCredential = definePlugin({
  name: 'test-admin-credential',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.lifecycle('test-admin-credential', -250, { start: () => kernel.provide('adminCredential', { token: 'admin-token' }) });
  },
});

/** Admission at CONNECT, as an admission plugin (or a webhook) sees it: records each, refuses exec of `forbidden`. */
const connects: AdmissionRequest[] = [];
const connectAdmission = definePlugin({
  name: 'test-connect-admission',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.validate.tapPromise({ name: 'test-connect-admission', stage: 500 }, async (request) => {
      if (request.operation !== 'CONNECT') return;
      connects.push(request);
      const options = request.object as { command?: string[] } | undefined;
      if (options?.command?.[0] === 'forbidden') throw new AdmissionError(`exec into pod '${request.name}' is not allowed`, 403);
    });
  },
});

let runtime: TestRuntime;
let server: TestServer;
let cacheDir: string;
let tokens = 0;
const node = new FakeNode(() => runtime);

/** The stand-in runtime runs two "commands": `upper` (stdin upper-cased to stdout) and `fail N` (a line on stderr, exit N). */
function command(request: Omit<StreamRequest, 'containerId'>): Script {
  const [name, arg] = request.cmd ?? [];
  if (name === 'fail') {
    return async (streams) => {
      streams.get('stderr')?.write(Buffer.from('oops\n'));
      return Number(arg);
    };
  }
  return async (streams, session) => {
    await session.ended('stdin');
    streams.get('stdout')!.write(Buffer.from(receivedText(streams.get('stdin')).toUpperCase()));
    return 0;
  };
}

node.token = (kind, request) => {
  const token = `t${++tokens}`;
  if (kind === 'portforward') {
    runtime.expect(kind, token, ['error:0', 'data:0'], async (streams) => {
      await eventually(() => (streams.get('data:0')?.received.length ?? 0) > 0);
      streams.get('data:0')!.write(Buffer.from(`echo:${receivedText(streams.get('data:0'))}`));
      await new Promise((resolve) => setTimeout(resolve, 200));
      return 0;
    });
  } else {
    const types = ['error', ...(request!.stdin ? ['stdin'] : []), ...(request!.stdout ? ['stdout'] : []), ...(request!.stderr ? ['stderr'] : [])];
    runtime.expect(kind, token, types, command(request!));
  }
  return token;
};

beforeAll(async () => {
  runtime = await startTestRuntime();
  server = await startTestServer({ testDefinitions: false, plugins: [adminCredential, connectAdmission, nodeConnectionsPlugin({ 'node-a': node })] });
  cacheDir = mkdtempSync(join(tmpdir(), 'skiff-kubectl-streams-'));
  const created = await server.request('POST', '/api/v1/namespaces/default/pods', {
    body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: 'node-a', containers: [{ name: 'app', image: 'busybox' }] } },
  });
  expect(created.status).toBe(201);
  // kubectl port-forward wants a running pod; no kubelet runs this one.
  const running = await server.request('PATCH', '/api/v1/namespaces/default/pods/web/status', {
    contentType: 'application/merge-patch+json',
    body: { status: { phase: 'Running' } },
  });
  expect(running.status).toBe(200);
});
afterAll(async () => {
  await server?.stop();
  await runtime?.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

const kubectlArgs = (args: string[]) => ['--kubeconfig', join(server.dataDir, 'admin.kubeconfig'), '--cache-dir', cacheDir, ...args];

function kubectl(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', kubectlArgs(args), { timeout: 20_000, env: { ...process.env, ...options.env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

const TRANSPORTS: { name: string; env: Record<string, string> }[] = [
  { name: 'WebSocket', env: {} },
  { name: 'SPDY', env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' } },
];

describe.each(TRANSPORTS)('the real kubectl over $name', ({ env }) => {
  it('execs with stdin and passes the exit code back', async () => {
    expect(await kubectl(['exec', '-i', 'web', '--', 'upper'], { input: 'shout\n', env })).toEqual({ code: 0, stdout: 'SHOUT\n', stderr: '' });
    expect(await kubectl(['exec', 'web', '--', 'fail', '3'], { env })).toEqual({ code: 3, stdout: '', stderr: 'oops\ncommand terminated with exit code 3\n' });
  });

  it('port-forwards a local port to the pod', async () => {
    const forward = spawn('kubectl', kubectlArgs(['port-forward', 'pod/web', ':80']), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    forward.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
    forward.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    try {
      await eventually(() => /Forwarding from 127\.0\.0\.1:\d+/.test(said), 10_000).catch(() => {
        throw new Error(`kubectl port-forward did not listen; it said: ${said}`);
      });
      const port = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(said)![1]);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write('ping'));
        let received = '';
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString();
          if (received.length >= 'echo:ping'.length) {
            socket.destroy();
            resolve(received);
          }
        });
        socket.on('error', reject);
      });
      expect(answer).toBe('echo:ping');
      // kubectl names the ports in each stream's headers, not in the URL.
      expect(node.portForwardCalls.at(-1)).toMatchObject({ pod: { name: 'web' }, ports: [] });
    } finally {
      forward.kill('SIGINT');
    }
  });
});

describe('admission of CONNECT requests', () => {
  it('passes exec, attach and port-forward options through admission, which may refuse them before the node is reached', async () => {
    connects.length = 0;
    const calls = node.streamCalls.length;
    const refused = await kubectl(['exec', 'web', '-c', 'app', '--', 'forbidden', 'x']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("exec into pod 'web' is not allowed");
    expect(node.streamCalls.length).toBe(calls);
    expect(connects[0]).toMatchObject({
      operation: 'CONNECT',
      kind: { group: '', version: 'v1', kind: 'PodExecOptions' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      subresource: 'exec',
      namespace: 'default',
      name: 'web',
      object: { kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, stderr: true, container: 'app', command: ['forbidden', 'x'] },
    });
    expect(await kubectl(['exec', '-i', 'web', '--', 'upper'], { input: 'ok\n' })).toMatchObject({ code: 0, stdout: 'OK\n' });
    expect(connects.at(-1)!.object).toMatchObject({ kind: 'PodExecOptions', stdin: true, command: ['upper'] });
  });
});

describe('the real kubectl logs', () => {
  it('prints the log, following it until it ends', async () => {
    expect(await kubectl(['logs', 'web'])).toEqual({ code: 0, stdout: 'line 1\nline 2\n', stderr: '' });
    expect(await kubectl(['logs', '-f', '--tail=1', 'web'])).toMatchObject({ code: 0, stdout: 'line 1\nline 2\n' });
    expect(node.logCalls.at(-1)!.options).toMatchObject({ follow: true, tailLines: 1 });
  });
});
