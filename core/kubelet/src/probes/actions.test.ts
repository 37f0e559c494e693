import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttp2Server, type Http2Server } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ContainerRuntime, ExecSyncResult } from '@skiff/kernel';
import { KubeletError } from '../errors.js';
import { boundPod } from '../test-support/objects.js';
import { ActionRunner, PROBE_USER_AGENT, resolvePort, type ActionTarget } from './actions.js';

let http: Server;
let httpPort: number;
let seen: IncomingHttpHeaders | undefined;
let grpcServer: Http2Server;
let grpcPort: number;
let grpcStatus = 1;

beforeAll(async () => {
  http = createServer((req, res) => {
    seen = req.headers;
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000);
    if (req.url === '/trickle') {
      // A byte every 50 ms, never ending: the socket is never idle for long.
      res.writeHead(200);
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
      return;
    }
    if (req.url === '/flood') {
      // 64 KiB at once, then the response stays open.
      res.writeHead(200);
      res.write('x'.repeat(64 * 1024));
      return;
    }
    res.statusCode = req.url === '/healthz' ? 200 : req.url === '/moved' ? 302 : 500;
    res.end(req.url === '/healthz' ? 'ok' : 'nope');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  httpPort = (http.address() as AddressInfo).port;
  grpcServer = createHttp2Server();
  grpcServer.on('stream', (stream, headers) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      if (headers[':path'] !== '/grpc.health.v1.Health/Check') {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.from([0, 0, 0, 0, 2, 0x08, grpcStatus]));
    });
  });
  await new Promise<void>((resolve) => grpcServer.listen(0, '127.0.0.1', resolve));
  grpcPort = (grpcServer.address() as AddressInfo).port;
});
afterAll(() => {
  http.close();
  grpcServer.close();
});

function runtime(execSync?: ContainerRuntime['execSync'], simulated = false): ContainerRuntime {
  return { name: 'test', simulated, ...(execSync ? { execSync } : {}) } as unknown as ContainerRuntime;
}

const pod = boundPod('web-1', { containers: [{ name: 'app', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] });
const target: ActionTarget = { pod, container: pod.spec.containers[0]!, containerId: 'c1', podIP: '127.0.0.1' };
const result = (exitCode: number, stdout = '', stderr = ''): ExecSyncResult => ({ stdout: Buffer.from(stdout), stderr: Buffer.from(stderr), exitCode });

describe('probe and hook actions', () => {
  it('exec: the exit code decides, the output is the message', async () => {
    const calls: unknown[] = [];
    const runner = new ActionRunner(
      runtime(async (id, cmd, timeout) => {
        calls.push([id, cmd, timeout]);
        return cmd[0] === 'true' ? result(0, 'fine') : result(3, 'out ', 'err');
      }),
    );
    expect(await runner.run({ exec: { command: ['true'] } }, target, 5)).toEqual({ outcome: 'success', output: 'fine', exitCode: 0 });
    expect(await runner.run({ exec: { command: ['false'] } }, target, 5)).toEqual({ outcome: 'failure', output: 'out err', exitCode: 3 });
    expect(calls[0]).toEqual(['c1', ['true'], 5]);
    await expect(new ActionRunner(runtime()).run({ exec: { command: ['x'] } }, target, 1)).rejects.toThrow('cannot run commands in containers');
  });

  it('exec: a command that outlives its timeout fails (DeadlineExceeded from the runtime, wrapped or not)', async () => {
    const deadline = Object.assign(new Error('rpc error: code = DeadlineExceeded desc = context deadline exceeded'), { grpcCode: 'DeadlineExceeded' });
    const timedOut = { outcome: 'failure', output: 'command "sleep 10" timed out' };
    const plain = new ActionRunner(
      runtime(async () => {
        throw deadline;
      }),
    );
    expect(await plain.run({ exec: { command: ['sleep', '10'] } }, target, 1)).toEqual(timedOut);
    const wrapped = new ActionRunner(
      runtime(async () => {
        throw new KubeletError(
          'SKIFF_ERR_KUBELET_RUNTIME_FAILED',
          { name: 'containerd', from: '', method: 'execSync', detail: deadline.message },
          { cause: new Error('outer', { cause: deadline }) },
        );
      }),
    );
    expect(await wrapped.run({ exec: { command: ['sleep', '10'] } }, target, 1)).toEqual(timedOut);
    const broken = new ActionRunner(
      runtime(async () => {
        throw Object.assign(new Error('rpc error: code = NotFound desc = container not found'), { grpcCode: 'NotFound' });
      }),
    );
    await expect(broken.run({ exec: { command: ['true'] } }, target, 1)).rejects.toThrow('code = NotFound');
    // A runtime that does not answer at all: the kubelet gives up a second after the timeout.
    vi.useFakeTimers();
    try {
      const silent = new ActionRunner(runtime(() => new Promise(() => undefined)));
      const pending = silent.run({ exec: { command: ['sleep', '10'] } }, target, 2);
      await vi.advanceTimersByTimeAsync(3000);
      expect(await pending).toEqual(timedOut);
    } finally {
      vi.useRealTimers();
    }
  });

  it('httpGet: a response that never ends fails at the deadline; a huge one is cut at 10 KiB', { timeout: 5000 }, async () => {
    const runner = new ActionRunner(runtime());
    const started = Date.now();
    expect(await runner.run({ httpGet: { path: '/trickle', port: httpPort } }, target, 0.3)).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${httpPort}/trickle": context deadline exceeded (Client.Timeout or context cancellation while reading body)`,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    const flood = await runner.run({ httpGet: { path: '/flood', port: httpPort } }, target, 3);
    expect(flood.outcome).toBe('success');
    expect(flood.output).toBe('x'.repeat(10 * 1024));
  });

  it('httpGet: 200–399 succeed, with kube-probe as User-Agent and the headers asked for', async () => {
    const runner = new ActionRunner(runtime());
    const ok = await runner.run({ httpGet: { path: '/healthz', port: httpPort, httpHeaders: [{ name: 'X-Probe', value: 'yes' }] } }, target, 1);
    expect(ok).toEqual({ outcome: 'success', output: 'ok' });
    expect(seen).toMatchObject({ 'user-agent': PROBE_USER_AGENT, 'x-probe': 'yes', accept: '*/*' });
    expect(PROBE_USER_AGENT).toBe('kube-probe/1.36');
    expect((await runner.run({ httpGet: { path: '/moved', port: httpPort } }, target, 1)).outcome).toBe('success');
    expect(await runner.run({ httpGet: { path: '/broken', port: String(httpPort) } }, target, 1)).toEqual({
      outcome: 'failure',
      output: 'HTTP probe failed with statuscode: 500',
    });
  });

  it('httpGet: a refused connection or a slow answer fails with what Go would say', async () => {
    const runner = new ActionRunner(runtime());
    const closed = await freePort();
    expect(await runner.run({ httpGet: { path: '/', port: closed } }, target, 1)).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${closed}/": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
    expect(await runner.run({ httpGet: { path: '/slow', port: httpPort } }, target, 0.2)).toEqual({
      outcome: 'failure',
      output: `Get "http://127.0.0.1:${httpPort}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
  });

  it('tcpSocket: a connection that opens succeeds', async () => {
    const runner = new ActionRunner(runtime());
    expect((await runner.run({ tcpSocket: { port: httpPort } }, target, 1)).outcome).toBe('success');
    const closed = await freePort();
    expect(await runner.run({ tcpSocket: { port: closed } }, target, 1)).toEqual({
      outcome: 'failure',
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
  });

  it('grpc: grpc.health.v1 SERVING succeeds, NOT_SERVING fails', async () => {
    const runner = new ActionRunner(runtime());
    grpcStatus = 1;
    expect((await runner.run({ grpc: { port: grpcPort } }, target, 1)).outcome).toBe('success');
    grpcStatus = 2;
    expect(await runner.run({ grpc: { port: grpcPort, service: 'db' } }, target, 1)).toEqual({
      outcome: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
  });

  it('does not dial the pods of a simulated runtime: network actions succeed', async () => {
    const runner = new ActionRunner(runtime(undefined, true));
    const nowhere = { ...target, podIP: '10.244.1.2' };
    expect((await runner.run({ httpGet: { path: '/', port: 1 } }, nowhere, 1)).outcome).toBe('success');
    expect((await runner.run({ tcpSocket: { port: 1 } }, nowhere, 1)).outcome).toBe('success');
    expect((await runner.run({ grpc: { port: 1 } }, nowhere, 1)).outcome).toBe('success');
  });

  it('resolves named ports', () => {
    expect(resolvePort('http', target.container)).toBe(8080);
    expect(resolvePort(81, target.container)).toBe(81);
    expect(() => resolvePort('admin', target.container)).toThrow(`couldn't find port: admin in container "app"`);
  });
});

async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
