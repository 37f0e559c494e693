#!/usr/bin/env node
// Throughput of the LMDB store (@skiff/store, its built dist) next to raw lmdb-js doing the equivalent
// work in the same run, on the same disk, with the same settings (overlappingSync and event-turn batching off,
// msgpack values with shared structures):
//   create / update  store.create / store.update (64 in flight)  vs  db.put (64 in flight)
//   get              store.get                                    vs  db.get
//   list 1000        store.list(prefix, { limit: 1000 })          vs  db.getRange({ limit: 1000 })
//   watch fan-out    write → every live watcher has the event     vs  db.put → commit acknowledged
// plus raw reads of those msgpack values against JSON values in a tight loop: the store's encoding choice.
// Store and raw take turns in ROUNDS short rounds (BENCH_BUDGET_MS each, default 400 ms) and the best
// round counts, so a busy machine disturbs the comparison less. About 15 s in all.
// Needs `npm run build` first (or `npx tsup` in core/store).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { openLmdbStore } from '@skiff/store';

const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 400);
const ROUNDS = 3;
const IN_FLIGHT = 64;
const LIST_SIZE = 1000;
const WATCH_EVENTS = 300;

function pod(name, generation = 1) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'bench',
      uid: `uid-${name}`,
      generation,
      labels: { app: 'web', tier: 'frontend' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(200) },
    },
    spec: {
      nodeName: 'node-1',
      containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }], resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
    },
    status: { phase: 'Running', podIP: '10.0.0.5', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** Calls `op(i)` with `inFlight` calls outstanding until the budget is spent; returns ops/s. */
async function rate(op, inFlight = 1) {
  let started = 0;
  let done = 0;
  const deadline = performance.now() + BUDGET_MS;
  const begin = performance.now();
  async function lane() {
    while (performance.now() < deadline) {
      await op(started++);
      done++;
    }
  }
  await Promise.all(Array.from({ length: inFlight }, lane));
  return (done / (performance.now() - begin)) * 1000;
}

/** Calls the synchronous `op(i)` in a tight loop until the budget is spent; returns ops/s. */
async function syncRate(op) {
  let done = 0;
  const begin = performance.now();
  const deadline = begin + BUDGET_MS;
  while (performance.now() < deadline) {
    for (let n = 0; n < 100; n++) op(done++);
  }
  return (done / (performance.now() - begin)) * 1000;
}

/** Runs each named measurement ROUNDS times, taking turns, and keeps the best rate of each. */
async function bestOf(measurements) {
  const best = Object.fromEntries(Object.keys(measurements).map((name) => [name, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, measure] of Object.entries(measurements)) best[name] = Math.max(best[name], await measure());
  }
  return best;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

const format = (n) => Math.round(n).toLocaleString('en-US').padStart(10);
const ms = (n) => `${n.toFixed(2)} ms`;
function row(name, store, raw) {
  console.log(`${name.padEnd(22)} store ${format(store)} ops/s   raw lmdb ${format(raw)} ops/s   (store at ${Math.round((store / raw) * 100)}%)`);
}

const dir = mkdtempSync(join(tmpdir(), 'skiff-store-bench-'));
const store = await openLmdbStore({ path: join(dir, 'store'), compactionIntervalMs: 0 });
const raw = open({ path: join(dir, 'raw'), overlappingSync: false, eventTurnBatching: false, encoding: 'msgpack' });
const rawObjects = raw.openDB('objects', { sharedStructuresKey: Symbol.for('bench.structures') });
const rawJson = raw.openDB('objects-json', { encoding: 'json' });
const key = (i) => `/registry/pods/bench/p${String(i).padStart(8, '0')}`;

try {
  console.log(`best of ${ROUNDS} rounds of ${BUDGET_MS} ms each; ${IN_FLIGHT} writes in flight; every commit fsyncs`);
  const written = { store: 0, raw: 0 };
  const creates = await bestOf({
    store: () => rate(() => store.create(key(written.store), pod(`p${written.store++}`)), IN_FLIGHT),
    raw: () => rate(() => rawObjects.put(key(written.raw), pod(`p${written.raw++}`)), IN_FLIGHT),
  });
  row('create', creates.store, creates.raw);

  // Both sides read (and later update) the same keys, which both have written.
  const existing = Math.min(written.store, written.raw);
  await rawJson.transaction(() => {
    for (let i = 0; i < existing; i++) rawJson.put(key(i), pod(`p${i}`));
  });
  const existingKeys = Array.from({ length: existing }, (_, i) => key(i));
  const pickKey = (i) => existingKeys[(i * 7919) % existing];
  const gets = await bestOf({
    store: () => rate((i) => store.get(pickKey(i))),
    raw: () => rate((i) => rawObjects.get(pickKey(i))),
  });
  row('get', gets.store, gets.raw);
  // Reading cost alone (no await per read): why the store keeps msgpack rather than JSON values.
  const decodes = await bestOf({
    msgpack: () => syncRate((i) => rawObjects.get(pickKey(i))),
    json: () => syncRate((i) => rawJson.get(pickKey(i))),
  });
  console.log(
    `${'get, sync loop'.padEnd(22)} raw msgpack ${format(decodes.msgpack)} ops/s   raw JSON ${format(decodes.json)} ops/s   (msgpack ${(decodes.msgpack / decodes.json).toFixed(2)}x)`,
  );

  const updates = await bestOf({
    store: () => rate((i) => store.update(pickKey(i), pod(`u${i}`, 2)), IN_FLIGHT),
    raw: () => rate((i) => rawObjects.put(pickKey(i), pod(`u${i}`, 2)), IN_FLIGHT),
  });
  row('update', updates.store, updates.raw);

  const prefix = '/registry/pods/bench/';
  const lists = await bestOf({
    store: () =>
      rate(async () => {
        const result = await store.list(prefix, { limit: LIST_SIZE });
        if (result.items.length !== LIST_SIZE) throw new Error(`listed ${result.items.length}`);
      }),
    raw: () =>
      rate(() => {
        const items = [];
        for (const { value } of rawObjects.getRange({ start: prefix, end: `${prefix}\u{10FFFF}`, limit: LIST_SIZE })) items.push(value);
        if (items.length !== LIST_SIZE) throw new Error(`listed ${items.length}`);
      }),
  });
  row(`list ${LIST_SIZE}`, lists.store, lists.raw);

  for (const watchers of [1, 10]) {
    const controller = new AbortController();
    const iterators = Array.from({ length: watchers }, () => store.watch('/registry/watched/', store.revision(), controller.signal)[Symbol.asyncIterator]());
    const latencies = [];
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const arrivals = Promise.all(iterators.map((iterator) => iterator.next()));
      const start = performance.now();
      await store.create(`/registry/watched/w${watchers}-${i}`, pod(`w${i}`));
      await arrivals;
      latencies.push(performance.now() - start);
    }
    controller.abort();
    const commits = [];
    for (let i = 0; i < WATCH_EVENTS; i++) {
      const start = performance.now();
      await rawObjects.put(`/registry/watched/w${watchers}-${i}`, pod(`w${i}`));
      commits.push(performance.now() - start);
    }
    latencies.sort((a, b) => a - b);
    commits.sort((a, b) => a - b);
    console.log(
      `${`watch fan-out x${watchers}`.padEnd(22)} write→all watchers p50 ${ms(percentile(latencies, 50))} p99 ${ms(percentile(latencies, 99))}` +
        `   raw put→commit p50 ${ms(percentile(commits, 50))} p99 ${ms(percentile(commits, 99))}`,
    );
  }
} finally {
  await store.close();
  await raw.close();
  rmSync(dir, { recursive: true, force: true });
}
