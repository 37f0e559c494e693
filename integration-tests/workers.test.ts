import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sendOnFreshConnection } from './fresh-connection.js';
import { Kubectl, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// The API server on two threads (config apiServer.workers: 2) over one LMDB store, driven over many connections —
// each new connection goes to whichever thread accepts it first, so they land on both.

const WORKERS = 2;
let dir: string;
let skiff: RunningSkiff;
let target: { url: string; ca: Buffer; token: string };

function readTarget(kubeconfig: string): { url: string; ca: Buffer; token: string } {
  const config = parse(readFileSync(kubeconfig, 'utf8'));
  return {
    url: config.clusters[0].cluster.server,
    ca: Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64'),
    token: config.users[0].user.token,
  };
}

/** One request on a connection of its own, its body parsed as JSON. */
async function send(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const { status, text } = await sendOnFreshConnection(target, method, path, body);
  return { status, json: text ? JSON.parse(text) : undefined };
}

/** GET /metrics on a connection of its own: the text the scrape answered. */
function scrape(): Promise<string> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: target.ca, keepAlive: false });
    const req = request(`${target.url}/metrics`, { agent, headers: { authorization: `Bearer ${target.token}` } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        agent.destroy();
        if (res.statusCode === 200 && /^text\/plain; version=0\.0\.4/.test(res.headers['content-type'] ?? '')) resolve(text);
        else reject(new Error(`GET /metrics answered ${res.statusCode} ${res.headers['content-type']}: ${text.slice(0, 200)}`));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

interface WatchEvent {
  type: string;
  object: { metadata: { name: string; resourceVersion: string } };
}

/** A watch on a connection of its own; `events` fills as lines arrive. */
function watch(path: string): { events: WatchEvent[]; opened: Promise<void>; close(): void } {
  const events: WatchEvent[] = [];
  const agent = new Agent({ ca: target.ca, keepAlive: false });
  let buffered = '';
  let opened!: () => void;
  const req = request(`${target.url}${path}`, { agent, headers: { authorization: `Bearer ${target.token}`, accept: 'application/json' } }, (res) => {
    opened();
    res.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim()) events.push(JSON.parse(line));
      }
    });
    res.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  req.end();
  return { events, opened: new Promise((resolve) => (opened = resolve)), close: () => (req.destroy(), agent.destroy()) };
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { name } });

beforeAll(async () => {
  dir = tempDir('workers');
  writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ preset: 'dev', apiServer: { workers: WORKERS, workerStart: 'at-start' } }));
  skiff = await startSkiff(['--data-dir', join(dir, 'data')], { cwd: dir, timeoutMs: 60_000 });
  target = readTarget(skiff.kubeconfig);
}, 90_000);

afterAll(async () => {
  await skiff?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe(`the API server on ${WORKERS} threads`, () => {
  it('shows every watch each write made through any connection, once and in resourceVersion order', async () => {
    expect((await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'spread' } })).status).toBe(201);
    const listed = await send('GET', '/api/v1/namespaces/spread/configmaps');
    const from = listed.json.metadata.resourceVersion as string;
    const watches = Array.from({ length: 8 }, () => watch(`/api/v1/namespaces/spread/configmaps?watch=1&resourceVersion=${from}`));
    await Promise.all(watches.map((w) => w.opened));
    // 80 creates, 16 at a time, each on a new connection.
    const names = Array.from({ length: 80 }, (_, i) => `cm-${i}`);
    for (let i = 0; i < names.length; i += 16) {
      const answers = await Promise.all(names.slice(i, i + 16).map((name) => send('POST', '/api/v1/namespaces/spread/configmaps', configMap(name))));
      for (const answer of answers) expect(answer.status).toBe(201);
    }
    const deadline = Date.now() + 20_000;
    while (watches.some((w) => w.events.length < names.length) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const w of watches) w.close();
    const expected = watches[0]!.events.map((event) => `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}`);
    expect(expected).toHaveLength(names.length);
    expect(new Set(watches[0]!.events.map((event) => event.object.metadata.name))).toEqual(new Set(names));
    const versions = watches[0]!.events.map((event) => Number(event.object.metadata.resourceVersion));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
    // Every watch, whichever thread serves it, saw the same events in the same order.
    for (const w of watches.slice(1))
      expect(w.events.map((event) => `${event.type} ${event.object.metadata.name} ${event.object.metadata.resourceVersion}`)).toEqual(expected);
  }, 60_000);

  it('shows both threads at work in /metrics, one scrape aggregating every thread, whichever thread it reaches', async () => {
    // After the 80 creates above, each on a new connection: several scrapes, each on a new connection too.
    for (let i = 0; i < 4; i++) {
      const text = await scrape();
      const served = new Map([...text.matchAll(/^skiff_apiserver_thread_requests_total\{thread="(\d+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
      expect([...served.keys()].sort()).toEqual(Array.from({ length: WORKERS }, (_, thread) => String(thread)));
      for (const count of served.values()) expect(count).toBeGreaterThan(0);
      const creates = [...text.matchAll(/^apiserver_request_total\{verb="POST",[^}]*resource="configmaps",[^}]*code="201"\} (\d+)$/gm)];
      expect(creates).toHaveLength(1);
      expect(Number(creates[0]![1])).toBeGreaterThanOrEqual(80);
    }
  }, 30_000);

  it('reads its own writes on any connection: a GET right after a create, and a list at once', async () => {
    for (let i = 0; i < 20; i++) {
      const created = await send('POST', '/api/v1/namespaces/spread/configmaps', configMap(`ryw-${i}`));
      expect(created.status).toBe(201);
      const got = await send('GET', `/api/v1/namespaces/spread/configmaps/ryw-${i}`);
      expect(got.status).toBe(200);
      expect(got.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
      const updated = await send('PUT', `/api/v1/namespaces/spread/configmaps/ryw-${i}`, { ...got.json, data: { round: '2' } });
      expect(updated.status).toBe(200);
      const list = await send('GET', '/api/v1/namespaces/spread/configmaps?labelSelector=');
      const item = list.json.items.find((entry: { metadata: { name: string } }) => entry.metadata.name === `ryw-${i}`);
      expect(item.data).toEqual({ round: '2' });
      expect(Number(list.json.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(updated.json.metadata.resourceVersion));
    }
  }, 60_000);

  it('serves kubectl: apply, get, logs of a pod on the primary thread’s node, delete', async () => {
    const kubectl = new Kubectl(skiff.kubeconfig);
    await kubectl.ok('create', 'deployment', 'web', '--image=nginx', '--replicas=1');
    await kubectl.ok('rollout', 'status', 'deployment/web', '--timeout=30s');
    // Each kubectl call is a new connection: some reach the worker thread, which asks the primary for the log.
    for (let i = 0; i < 6; i++) expect(await kubectl.ok('logs', 'deployment/web')).toContain('started');
    await kubectl.ok('delete', 'deployment', 'web');
  }, 90_000);

  it('keeps every acknowledged write through a kill -9 and starts again on the same data', async () => {
    expect((await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'durable' } })).status).toBe(201);
    const acknowledged: string[] = [];
    let writing = true;
    const writers = Array.from({ length: 12 }, async (_, loop) => {
      for (let i = 0; writing; i++) {
        const name = `w-${loop}-${i}`;
        try {
          const answer = await send('POST', '/api/v1/namespaces/durable/configmaps', configMap(name));
          if (answer.status === 201) acknowledged.push(name);
        } catch {
          return; // the server is gone
        }
      }
    });
    await new Promise((r) => setTimeout(r, 1_500));
    skiff.process.kill('SIGKILL');
    writing = false;
    await Promise.all(writers);
    await skiff.stop();
    expect(acknowledged.length).toBeGreaterThan(20);
    skiff = await startSkiff(['--data-dir', join(dir, 'data')], { cwd: dir, timeoutMs: 60_000 });
    target = readTarget(skiff.kubeconfig);
    const names = new Set(
      (await send('GET', '/api/v1/namespaces/durable/configmaps')).json.items.map((item: { metadata: { name: string } }) => item.metadata.name),
    );
    const lost = acknowledged.filter((name) => !names.has(name));
    expect(lost).toEqual([]);
  }, 120_000);
});
