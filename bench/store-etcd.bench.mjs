#!/usr/bin/env node
// Skiff on LMDB against Skiff on etcd, and upstream's kube-apiserver on the same etcd when its binary is at hand
// (UPSTREAM_APISERVER, default /root/upstream/bin/kube-apiserver; see ../shared/upstream/README.md), in one run:
//   - the store alone: creates/s and gets/s straight on the LMDB store and on the etcd store (the floor each API
//     server stands on);
//   - over HTTPS keep-alive: ConfigMap creates/s, GETs/s, the time of one LIST of 2,000 ConfigMaps, and watch fan-out
//     (WATCHERS watches of one namespace, EVENTS creates in it: every event delivered to every watcher).
// etcd is Debian's, one member on loopback, its data in a temporary folder (fsync on, as in production). Bounded in
// time: BENCH_SECONDS (default 3) per load scenario. Needs `npm run build` first.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request, Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbStore } from '@skiff/store';
import etcdStorePlugin, { openEtcdStore } from '@skiff/plugin-store-etcd';
import { startBenchApiServer } from './bench-cluster.mjs';
import { load as runLoad } from './https-load.mjs';
import { call, startEtcd, startUpstream, UPSTREAM_APISERVER as UPSTREAM } from './upstream.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const LIST_SIZE = 2000;
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 50);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);

const configMap = (name, namespace) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { key: 'value', other: 'x'.repeat(200) } });

/** `count` creates, `concurrency` at a time; answers the seconds taken. */
async function createMany(server, namespace, count, concurrency = CONCURRENCY) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const name = `cm-${next++}`;
        const answer = await call(server.agent, `${server.url}/api/v1/namespaces/${namespace}/configmaps`, {
          method: 'POST',
          body: configMap(name, namespace),
          token: server.token,
        });
        if (answer.status !== 201) throw new Error(`create ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

async function ensureNamespace(server, name) {
  const answer = await call(server.agent, `${server.url}/api/v1/namespaces`, {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    token: server.token,
  });
  if (answer.status !== 201 && answer.status !== 409) throw new Error(`namespace ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
}

/** Median milliseconds of one LIST of the namespace's ConfigMaps (all of them, one page). */
async function timeList(server, namespace, rounds = 10) {
  const times = [];
  let items = 0;
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const answer = await call(server.agent, `${server.url}/api/v1/namespaces/${namespace}/configmaps`, { token: server.token });
    times.push(performance.now() - started);
    items = JSON.parse(answer.text).items.length;
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], items };
}

/** WATCHERS watches of one namespace, then EVENTS creates in it: seconds until every watcher has every event. */
async function fanOut(server, namespace) {
  await ensureNamespace(server, namespace);
  const list = JSON.parse((await call(server.agent, `${server.url}/api/v1/namespaces/${namespace}/configmaps`, { token: server.token })).text);
  const rv = list.metadata.resourceVersion;
  let done = 0;
  let allDone;
  const finished = new Promise((resolve) => (allDone = resolve));
  const requests = [];
  const watchAgent = new Agent({ keepAlive: true, maxSockets: WATCHERS + 1, ca: server.ca });
  await Promise.all(
    Array.from(
      { length: WATCHERS },
      () =>
        new Promise((opened, failed) => {
          const req = request(
            `${server.url}/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${rv}`,
            { agent: watchAgent, headers: { authorization: `Bearer ${server.token}`, accept: 'application/json' } },
            (res) => {
              if (res.statusCode !== 200) failed(new Error(`watch: ${res.statusCode}`));
              opened();
              let seen = 0;
              let complete = false;
              res.on('data', (chunk) => {
                for (const byte of chunk) if (byte === 10) seen++;
                if (!complete && seen >= EVENTS) {
                  complete = true;
                  if (++done === WATCHERS) allDone();
                }
              });
              res.on('error', () => undefined);
            },
          );
          req.on('error', () => undefined);
          req.end();
          requests.push(req);
        }),
    ),
  );
  const started = performance.now();
  await createMany(server, namespace, EVENTS);
  await finished;
  const seconds = (performance.now() - started) / 1000;
  for (const req of requests) req.destroy();
  watchAgent.destroy();
  return seconds;
}

async function measureServer(name, server) {
  const agentOptions = { keepAlive: true, maxSockets: CONCURRENCY, ca: server.ca };
  server.agent = new Agent(agentOptions);
  const rows = [];
  await ensureNamespace(server, 'bench');
  await ensureNamespace(server, 'listing');
  await call(server.agent, `${server.url}/api/v1/namespaces/bench/configmaps`, { method: 'POST', body: configMap('read-me', 'bench'), token: server.token });
  const load = (options) => runLoad({ token: server.token, ca: server.ca, concurrency: CONCURRENCY, seconds: SECONDS, ...options });
  const creates = await load({ url: `${server.url}/api/v1/namespaces/bench/configmaps`, method: 'POST', body: JSON.stringify(configMap('NAME', 'bench')) });
  const gets = await load({ url: `${server.url}/api/v1/namespaces/bench/configmaps/read-me`, method: 'GET' });
  await createMany(server, 'listing', LIST_SIZE);
  const list = await timeList(server, 'listing');
  if (list.items !== LIST_SIZE) throw new Error(`${name}: the list has ${list.items} items, not ${LIST_SIZE}`);
  const fan = await fanOut(server, 'fan');
  rows.push({ name, creates: creates.rps, createP99: creates.p99, gets: gets.rps, getP99: gets.p99, listMs: list.ms, fanOutSeconds: fan });
  server.agent.destroy();
  return rows;
}

/** The store alone: `concurrency` loops of creates, then of gets, for SECONDS each. */
async function storeOnly(store) {
  const prefix = `/registry/configmaps/store-bench-${Date.now()}/`;
  const run = async (op) => {
    let count = 0;
    const end = performance.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, loop) => {
        for (let i = 0; performance.now() < end; i++) {
          await op(loop, i);
          count++;
        }
      }),
    );
    return count / SECONDS;
  };
  const creates = await run((loop, i) => store.create(`${prefix}c${loop}-${i}`, configMap(`c${loop}-${i}`, 'store-bench')));
  await store.create(`${prefix}read-me`, configMap('read-me', 'store-bench'));
  const gets = await run(() => store.get(`${prefix}read-me`));
  return { creates, gets };
}

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-etcd-'));
const cleanups = [];
try {
  const etcd = await startEtcd(dataDir);
  cleanups.push(etcd.stop);

  // The store alone.
  const lmdb = await openLmdbStore({ path: join(dataDir, 'lmdb-only'), compactionIntervalMs: 0 });
  const lmdbOnly = await storeOnly(lmdb);
  await lmdb.close();
  const etcdStore = await openEtcdStore({ endpoints: [etcd.endpoint], keyPrefix: '/store-only', compactionIntervalMs: 0 });
  const etcdOnly = await storeOnly(etcdStore);
  await etcdStore.close();

  const rows = [];
  const onLmdb = await startBenchApiServer({ dataDir: join(dataDir, 'on-lmdb') });
  rows.push(...(await measureServer('skiff on LMDB', { url: onLmdb.url, ca: onLmdb.caPem, token: onLmdb.token })));
  await onLmdb.stop();
  const onEtcd = await startBenchApiServer({
    dataDir: join(dataDir, 'on-etcd'),
    store: [etcdStorePlugin, { endpoints: [etcd.endpoint], keyPrefix: '/skiff-bench', compactionIntervalMs: 0 }],
  });
  rows.push(...(await measureServer('skiff on etcd', { url: onEtcd.url, ca: onEtcd.caPem, token: onEtcd.token })));
  await onEtcd.stop();
  if (existsSync(UPSTREAM)) {
    const upstream = await startUpstream(dataDir, etcd.endpoint);
    cleanups.push(upstream.stop);
    rows.push(...(await measureServer('kube-apiserver 1.28.7 on etcd', upstream)));
  } else {
    console.log(`(no ${UPSTREAM}: upstream's kube-apiserver is left out; ../shared/upstream/README.md builds it)`);
  }

  console.log(`the store alone, ${CONCURRENCY} concurrent calls, ${SECONDS} s each`);
  console.log('store'.padEnd(12), 'creates/s'.padStart(10), 'gets/s'.padStart(10));
  console.log('LMDB'.padEnd(12), lmdbOnly.creates.toFixed(0).padStart(10), lmdbOnly.gets.toFixed(0).padStart(10));
  console.log('etcd'.padEnd(12), etcdOnly.creates.toFixed(0).padStart(10), etcdOnly.gets.toFixed(0).padStart(10));
  console.log();
  console.log(
    `HTTPS keep-alive, ${CONCURRENCY} concurrent requests, ${SECONDS} s per load; LIST of ${LIST_SIZE} ConfigMaps (median of 10); fan-out: ${WATCHERS} watchers × ${EVENTS} creates`,
  );
  console.log(
    'server'.padEnd(30),
    'creates/s'.padStart(10),
    'p99 ms'.padStart(8),
    'GETs/s'.padStart(9),
    'p99 ms'.padStart(8),
    'LIST ms'.padStart(8),
    'fan-out s'.padStart(10),
    'events/s'.padStart(10),
  );
  for (const row of rows)
    console.log(
      row.name.padEnd(30),
      row.creates.toFixed(0).padStart(10),
      row.createP99.toFixed(2).padStart(8),
      row.gets.toFixed(0).padStart(9),
      row.getP99.toFixed(2).padStart(8),
      row.listMs.toFixed(1).padStart(8),
      row.fanOutSeconds.toFixed(2).padStart(10),
      ((WATCHERS * EVENTS) / row.fanOutSeconds).toFixed(0).padStart(10),
    );
  const [a, b] = rows;
  console.log(
    `skiff on etcd against skiff on LMDB: creates ${((b.creates / a.creates) * 100).toFixed(0)}%, GETs ${((b.gets / a.gets) * 100).toFixed(0)}%, LIST ${((b.listMs / a.listMs) * 100).toFixed(0)}% of the time, fan-out ${((b.fanOutSeconds / a.fanOutSeconds) * 100).toFixed(0)}% of the time`,
  );
  const upstreamRow = rows[2];
  if (upstreamRow)
    console.log(
      `skiff on etcd against kube-apiserver on the same etcd: creates ${((b.creates / upstreamRow.creates) * 100).toFixed(0)}%, GETs ${((b.gets / upstreamRow.gets) * 100).toFixed(0)}%, LIST ${((b.listMs / upstreamRow.listMs) * 100).toFixed(0)}% of the time, fan-out ${((b.fanOutSeconds / upstreamRow.fanOutSeconds) * 100).toFixed(0)}% of the time`,
    );
} finally {
  for (const cleanup of cleanups.reverse()) cleanup();
  await new Promise((resolve) => setTimeout(resolve, 300));
  rmSync(dataDir, { recursive: true, force: true });
}
