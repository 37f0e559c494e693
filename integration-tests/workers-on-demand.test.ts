import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sendOnFreshConnection, type HttpsTarget } from './fresh-connection.js';
import { startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// API server worker threads on demand (apiServer.workerStart "on-demand", the default): `skiff up` serves on the
// primary thread alone; LISTs that saturate its event loop start a second thread, which then takes new connections;
// once that thread has had no connection for workerIdleSeconds it stops, and the cluster goes on serving. The test sets
// workerIdleCores to 0 (the test's own clients share this machine's cores) and workerIdleSeconds to 3.

let dir: string;
let skiff: RunningSkiff;
let target: HttpsTarget;

/** One request on a connection of its own, so that new connections can land on a thread that started meanwhile. */
const send = (method: string, path: string, body?: unknown) => sendOnFreshConnection(target, method, path, body);

/** The serving and maximum thread counts, and the requests each thread answered, from one /metrics scrape. */
async function threads(): Promise<{ serving: number; max: number; requests: Map<string, number> }> {
  const { status, text } = await send('GET', '/metrics');
  expect(status).toBe(200);
  const gauge = (state: string) => Number(new RegExp(`^skiff_apiserver_threads\\{state="${state}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  const requests = new Map([...text.matchAll(/^skiff_apiserver_thread_requests_total\{thread="(\d+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
  return { serving: gauge('serving'), max: gauge('max'), requests };
}

/** The names of the test's ConfigMaps in a LIST (the namespace also holds kube-root-ca.crt). */
function ours(listText: string): string[] {
  return (JSON.parse(listText) as { items: { metadata: { name: string } }[] }).items
    .map((item) => item.metadata.name)
    .filter((name) => name.startsWith('cm-') || name === 'after');
}

beforeAll(async () => {
  dir = tempDir('workers-on-demand');
  writeFileSync(
    join(dir, 'skiff.config.json'),
    JSON.stringify({ preset: 'dev', apiServer: { workers: 2 }, plugins: [['@skiff/apiserver', { workerIdleSeconds: 3, workerIdleCores: 0 }]] }),
  );
  skiff = await startSkiff(['--data-dir', join(dir, 'data')], { cwd: dir, timeoutMs: 60_000 });
  const config = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  target = {
    url: config.clusters[0].cluster.server,
    ca: Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64'),
    token: config.users[0].user.token,
  };
}, 90_000);

afterAll(async () => {
  await skiff?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('API server worker threads on demand', () => {
  it('start under load, serve, and stop once idle; no request fails and every write stays visible', async () => {
    const before = await threads();
    expect(before).toMatchObject({ serving: 1, max: 2 });
    expect([...before.requests.keys()]).toEqual(['0']);

    // 1,500 ConfigMaps, so that each LIST keeps the primary's loop busy for a while.
    expect((await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demand' } })).status).toBe(201);
    const data = { value: 'x'.repeat(300) };
    for (let i = 0; i < 1500; i += 25) {
      const answers = await Promise.all(
        Array.from({ length: 25 }, (_, j) =>
          send('POST', '/api/v1/namespaces/demand/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i + j}` }, data }),
        ),
      );
      for (const answer of answers) expect(answer.status).toBe(201);
    }

    // LISTs on 3 keep-alive connections keep the primary's loop saturated (the client only counts bytes); LISTs on new
    // connections, one at a time, reach whichever thread accepts them, until thread 1 has answered some.
    let loading = true;
    let lists = 0;
    const failures: string[] = [];
    const keepAlive = new Agent({ ca: target.ca, keepAlive: true, maxSockets: 3 });
    const saturate = async () => {
      while (loading) {
        const status = await new Promise<number>((resolve, reject) => {
          const req = request(
            `${target.url}/api/v1/namespaces/demand/configmaps`,
            { agent: keepAlive, headers: { authorization: `Bearer ${target.token}`, accept: 'application/json' } },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          );
          req.on('error', reject);
          req.end();
        });
        if (status !== 200) failures.push(`keep-alive LIST answered ${status}`);
      }
    };
    const probe = async () => {
      while (loading) {
        const { status, text } = await send('GET', '/api/v1/namespaces/demand/configmaps');
        if (status !== 200 || ours(text).length !== 1500) failures.push(`${status}, ${ours(text).length} ConfigMaps of the test's 1,500`);
        lists++;
      }
    };
    const load = Promise.all([saturate(), saturate(), saturate(), probe()]);
    let during: Awaited<ReturnType<typeof threads>>;
    try {
      during = await waitFor(
        'a second thread serving LISTs',
        async () => {
          const now = await threads();
          return now.serving === 2 && (now.requests.get('1') ?? 0) > 0 ? now : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
    } finally {
      loading = false;
      await load;
      keepAlive.destroy();
    }
    expect(failures).toEqual([]);
    expect(lists).toBeGreaterThan(0);
    expect(during.requests.get('1')).toBeGreaterThan(0);

    // Idle: the worker stops after 3 s without a connection; the primary goes on serving.
    await waitFor('the worker to stop', async () => (await threads()).serving === 1, { timeoutMs: 30_000, intervalMs: 1000 });
    const created = await send('POST', '/api/v1/namespaces/demand/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' }, data });
    expect(created.status).toBe(201);
    const read = await send('GET', '/api/v1/namespaces/demand/configmaps/after');
    expect(read.status).toBe(200);
    expect(ours((await send('GET', '/api/v1/namespaces/demand/configmaps')).text)).toHaveLength(1501);
  }, 240_000);
});
