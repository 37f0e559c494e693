// Test pieces for the kubelet server: certificates from a real CA, a pod run in the simulated runtime as the
// kubelet runs it, and a stand-in for a runtime's streaming server that answers the upgrade and then echoes.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { ensurePki, issueClientCertificate, readClusterCa } from '@skiff/apiserver';
import type { ContainerRuntime, PodRef, PodSandboxConfig, StreamRequest } from '@skiff/kernel';
import { CRI_LABELS } from '../names.js';
import { simulatedRuntime, withMethods } from '../test-support/node-parts.js';

export interface TestPki {
  caPem: string;
  /** A serving certificate for 127.0.0.1 and localhost. */
  serving: { certPem: string; keyPem: string };
  /** A client certificate: CN the user, one O per group. */
  client(user: string, groups?: string[]): { certPem: string; keyPem: string };
}

/** A CA in `dir/pki` (made there, or the one already there) with a serving certificate for this machine. */
export function testPki(dir: string): TestPki {
  const pki = ensurePki(dir, '127.0.0.1');
  const ca = readClusterCa(dir);
  return {
    caPem: pki.caPem,
    serving: { certPem: pki.certPem, keyPem: pki.keyPem },
    client: (user, groups = []) => issueClientCertificate(ca, { user, groups }),
  };
}

/** Certificates from another data dir's CA (a cluster's): its CA files are copied into `dir/pki` first. */
export function pkiOfCa(caDataDir: string, dir: string): TestPki {
  mkdirSync(join(dir, 'pki'), { recursive: true, mode: 0o700 });
  for (const file of ['ca.crt', 'ca.key']) copyFileSync(join(caDataDir, 'pki', file), join(dir, 'pki', file));
  return testPki(dir);
}

export interface HttpsAnswer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
}

export interface Credentials {
  ca: string;
  cert?: string;
  key?: string;
  token?: string;
}

/** One request to an HTTPS server, read to its end. */
export function httpsGet(url: string, credentials: Credentials, method = 'GET'): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const { ca, cert, key, token } = credentials;
    const req = httpsRequest(url, { method, ca, cert, key, agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export interface FollowedAnswer {
  status: number;
  /** What the body has brought so far. */
  text(): string;
  /** Goes away, as a client that stops following. */
  close(): void;
}

/** A streamed GET (a followed log): resolves once the head arrives, while the body keeps coming. */
export function follow(url: string, credentials: Credentials): Promise<FollowedAnswer> {
  return new Promise((resolve, reject) => {
    const { ca, cert, key, token } = credentials;
    const chunks: string[] = [];
    const req = httpsRequest(url, { ca, cert, key, agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      res.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
      resolve({ status: res.statusCode ?? 0, text: () => chunks.join(''), close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

export type UpgradeOutcome = { upgraded: true; response: IncomingMessage; socket: Socket; head: Buffer } | { upgraded: false; status: number; text: string };

/** An upgrade request (SPDY as kubectl's fallback sends it, unless `headers` say otherwise); resolves with the socket or the refusal. */
export function upgrade(url: string, credentials: Credentials, headers: Record<string, string | string[]> = {}, method = 'POST'): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const { ca, cert, key, token } = credentials;
    const req = httpsRequest(url, {
      method,
      ca,
      cert,
      key,
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'SPDY/3.1',
        'x-stream-protocol-version': ['v4.channel.k8s.io', 'v3.channel.k8s.io'],
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
    });
    req.on('upgrade', (response: IncomingMessage, socket: Socket, head: Buffer) => resolve({ upgraded: true, response, socket, head }));
    req.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ upgraded: false, status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Writes `data` and resolves with what came back once `expected` bytes arrived. */
export function exchange(socket: Socket, data: string, expected: number, head: Buffer = Buffer.alloc(0)): Promise<string> {
  return new Promise((resolve, reject) => {
    let received: Buffer = head;
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= expected) {
        socket.off('data', onData);
        resolve(received.toString('utf8'));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(data);
  });
}

export interface StandInStreaming {
  /** The URL the runtime hands out for a stream: `/<kind>/<token>`. */
  url(kind: string, token: string): string;
  /** Every upgrade request it got. */
  requests: { method: string; url: string; headers: IncomingMessage['headers'] }[];
  /** Answers the next upgrade with this status and text instead of switching protocols. */
  refuseNext(status: number, text: string): void;
  close(): Promise<void>;
}

/**
 * A runtime's streaming server as far as the kubelet can tell: it answers an upgrade with 101 (SPDY/3.1, the
 * first protocol version offered) and then sends back every byte it receives, upper-cased.
 */
export async function startStandInStreaming(): Promise<StandInStreaming> {
  const requests: StandInStreaming['requests'] = [];
  const sockets = new Set<Socket>();
  let refusal: { status: number; text: string } | undefined;
  const server: Server = createServer((_req, res) => res.writeHead(400, { 'content-type': 'text/plain' }).end('not an upgrade'));
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    if (refusal) {
      const { status, text } = refusal;
      refusal = undefined;
      socket.end(`HTTP/1.1 ${status} Refused\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
      return;
    }
    const offered = req.headersDistinct['x-stream-protocol-version'] ?? [];
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${offered[0] ?? ''}\r\n\r\n`);
    const echo = (chunk: Buffer) => socket.write(chunk.toString('utf8').toUpperCase());
    if (head.length) echo(head);
    socket.on('data', echo);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (kind, token) => `http://127.0.0.1:${port}/${kind}/${token}`,
    requests,
    refuseNext: (status, text) => (refusal = { status, text }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The simulated runtime with streaming URLs on the stand-in (as containerd has a streaming server). */
export async function streamingRuntime(dataDir: string, streaming: StandInStreaming): Promise<ContainerRuntime> {
  return withMethods(await simulatedRuntime(dataDir), {
    async exec(request: StreamRequest): Promise<string> {
      return `${streaming.url('exec', request.containerId)}?cmd=${encodeURIComponent(request.cmd?.join(' ') ?? '')}&tty=${request.tty ?? false}`;
    },
    async attach(request: StreamRequest): Promise<string> {
      return streaming.url('attach', request.containerId);
    },
    async portForward(sandboxId: string, ports: number[]): Promise<string> {
      return `${streaming.url('portforward', sandboxId)}?ports=${ports.join(',')}`;
    },
  });
}

/** Runs the pod's sandbox and a running container as the kubelet would (its CRI labels, a log folder under `dir`). */
export async function runPod(
  runtime: ContainerRuntime,
  dir: string,
  pod: PodRef,
  container: string,
  image = 'nginx:1.27',
): Promise<{ sandboxId: string; containerId: string }> {
  await runtime.pullImage(image);
  const labels = { [CRI_LABELS.POD_NAMESPACE]: pod.namespace, [CRI_LABELS.POD_NAME]: pod.name, [CRI_LABELS.POD_UID]: pod.uid };
  const config: PodSandboxConfig = { metadata: { ...pod, attempt: 0 }, logDirectory: join(dir, 'pods', `${pod.namespace}_${pod.name}_${pod.uid}`), labels };
  const sandboxId = await runtime.runPodSandbox(config);
  const containerId = await runtime.createContainer(
    sandboxId,
    {
      metadata: { name: container, attempt: 0 },
      image: { image },
      labels: { ...labels, [CRI_LABELS.CONTAINER_NAME]: container },
      logPath: `${container}/0.log`,
    },
    config,
  );
  await runtime.startContainer(containerId);
  return { sandboxId, containerId };
}
