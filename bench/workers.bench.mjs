#!/usr/bin/env node
// The API server on every core (issue 24): Skiff's bench API server (serve-bench.mjs) with 1 worker and with N
// (BENCH_WORKERS, default os.availableParallelism()) started with it, and with up to N started on demand (the default
// config: a worker starts when the primary's loop is saturated while a core is idle), each in a child process of its
// own, against, in the same run:
//   - a bare fastify HTTPS server answering fixed JSON (the floor: TLS, HTTP parsing and routing, nothing else) on
//     1 thread, on N threads sharing one listening socket, and on N node:cluster processes — threads against
//     processes, the two ways Node uses every core;
//   - upstream's kube-apiserver v1.28.7 on etcd (bench/upstream.mjs), when its binary is at hand.
// Workload per API server, Leases over HTTPS keep-alive with BENCH_CONCURRENCY (default 32) clients: creates/s and
// GETs/s of one Lease (time-bounded, BENCH_SECONDS each after a 1 s warm-up, default 3), the median time of one LIST
// of 2,000 Leases, deletes/s of those 2,000, then the idle memory (RSS and PSS from /proc) after BENCH_IDLE_SECONDS
// (default 5) without requests. The bare servers answer creates (POST) and GETs only. The clients (https-load.mjs)
// run in a worker thread of this process, on the same cores as the servers: on a small machine they are part of
// the limit. The whole sequence runs BENCH_ROUNDS times (default 2), in reverse order every other round, and the
// ratios use the median of the rounds. Needs `npm run build` first.
import { execFileSync, spawn } from 'node:child_process';
import cluster from 'node:cluster';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import fastify from 'fastify';
import { load as runLoad } from './https-load.mjs';
import { call, startEtcd, startUpstream, UPSTREAM_APISERVER } from './upstream.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WORKERS = Number(process.env.BENCH_WORKERS ?? availableParallelism());
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 5);
const LIST_SIZE = 2000;
// Longer than https-load's default: the first load after a server starts also warms the server's JIT.
const WARMUP_MS = 1000;
const THIS_FILE = fileURLToPath(import.meta.url);
const SERVE_BENCH = join(THIS_FILE, '..', 'serve-bench.mjs');

const lease = (name, namespace) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace },
  spec: { holderIdentity: 'bench', leaseDurationSeconds: 40 },
});
const leases = (namespace) => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;

// ---- The bare baseline, in a child process: `workers.bench.mjs --bare threads|cluster <count> <tlsDir>` ----

/** Fixed answers: a Lease-sized JSON for every GET, a 201 with it for every POST (whose JSON body fastify parses). */
function bareApp(tlsDir) {
  const app = fastify({ logger: false, https: { key: readFileSync(join(tlsDir, 'key.pem')), cert: readFileSync(join(tlsDir, 'cert.pem')) } });
  const answer = JSON.stringify(lease('read-me', 'bench'));
  app.get('/*', (request, reply) => reply.type('application/json').send(answer));
  app.post('/*', (request, reply) => reply.code(201).type('application/json').send(answer));
  return app;
}

/** Each thread or process tells the primary of every TLS connection it accepted, to show how they spread. */
function countConnections(app, tell) {
  app.server.on('secureConnection', () => tell());
}

async function serveBareThread({ tlsDir, fd }) {
  const app = bareApp(tlsDir);
  countConnections(app, () => parentPort.postMessage('connection'));
  await app.ready();
  // Node 20 has no SO_REUSEPORT: every thread polls the one listening socket the main thread made, and whichever
  // wakes first accepts. Closing a server would close that shared fd for all; the process exits instead.
  app.server.listen({ fd }, () => parentPort.postMessage('listening'));
}

async function serveBare(mode, count, tlsDir) {
  const connections = Array.from({ length: count }, () => 0);
  const ready = (port, pids) =>
    console.log(JSON.stringify({ url: `https://127.0.0.1:${port}`, caPem: readFileSync(join(tlsDir, 'cert.pem'), 'utf8'), token: 'none', pids }));
  const stopOnSigterm = (before) =>
    process.once('SIGTERM', () => {
      before();
      console.log(JSON.stringify({ connections }));
      process.exit(0);
    });
  if (mode === 'threads') {
    const app = bareApp(tlsDir);
    countConnections(app, () => connections[0]++);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const fd = app.server._handle.fd;
    await Promise.all(
      Array.from({ length: count - 1 }, (_, i) => {
        const worker = new Worker(THIS_FILE, { workerData: { tlsDir, fd } });
        return new Promise((resolve, reject) => {
          worker.on('message', (message) => (message === 'listening' ? resolve() : connections[i + 1]++));
          worker.once('error', reject);
        });
      }),
    );
    stopOnSigterm(() => undefined);
    ready(app.server.address().port, [process.pid]);
  } else {
    // node:cluster's default on Linux: the primary accepts and hands connections round-robin to the workers.
    const workers = Array.from({ length: count }, () => cluster.fork());
    const ports = await Promise.all(
      workers.map((worker, i) => {
        worker.on('message', () => connections[i]++);
        return new Promise((resolve) => worker.once('listening', ({ port }) => resolve(port)));
      }),
    );
    stopOnSigterm(() => workers.forEach((worker) => worker.process.kill('SIGKILL')));
    ready(ports[0], [process.pid, ...workers.map((worker) => worker.process.pid)]);
  }
}

async function serveBareProcess(tlsDir) {
  const app = bareApp(tlsDir);
  countConnections(app, () => process.send('connection'));
  // Every worker's listen(0) in a cluster gets the one port the primary picked for the first.
  await app.listen({ host: '127.0.0.1', port: 0 });
}

// ---- The bench ----

/** A server in a child process: answers what its first stdout line says, its `pids` and `stop()`. */
async function startChild(args) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  let buffered = '';
  let lineArrived = () => undefined;
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      // The JSON lines are the child's answers; anything else it prints is passed on.
      if (!line.startsWith('{')) {
        console.log(line);
        continue;
      }
      lines.push(JSON.parse(line));
      lineArrived();
    }
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const nextLine = () =>
    lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((resolve) => (lineArrived = () => lines.length > 0 && resolve(lines.shift())));
  let stopped;
  const first = await Promise.race([nextLine(), exited.then((code) => Promise.reject(new Error(`${args.join(' ')} exited (${code}) before serving`)))]);
  return {
    url: first.url,
    ca: first.caPem,
    token: first.token,
    pids: first.pids ?? [child.pid],
    /** SIGTERM, SIGKILL after 5 s; answers the line the child printed on its way out, if any. */
    stop() {
      stopped ??= (async () => {
        const last = nextLine();
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
        return Promise.race([last, new Promise((resolve) => setTimeout(resolve, 100))]);
      })();
      return stopped;
    },
  };
}

/** Resident and proportional set size of the processes, summed, in MiB. */
function memory(pids) {
  const kib = (path, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(path, 'utf8'))?.[1] ?? NaN);
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    rss += kib(`/proc/${pid}/status`, 'VmRSS');
    pss += kib(`/proc/${pid}/smaps_rollup`, 'Pss');
  }
  return { rss: rss / 1024, pss: pss / 1024 };
}

const idle = () => new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));

/** `work(i)` for i in 0..count-1, CONCURRENCY at a time; answers the seconds taken. */
async function concurrently(count, work) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await work(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

async function expect(what, answer, ...statuses) {
  const { status, text } = await answer;
  if (!statuses.includes(status)) throw new Error(`${what}: ${status} ${text.slice(0, 200)}`);
  return text;
}

/** Creates/s, GETs/s, LIST of LIST_SIZE Leases (median of 10), deletes/s of those. */
async function measureApiServer(server) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.ca });
  const send = (path, options = {}) => call(agent, `${server.url}${path}`, { token: server.token, ...options });
  for (const name of ['bench', 'listing']) {
    // No namespace lifecycle admission on Skiff's bench server, but upstream wants the namespaces: 409 is fine.
    await expect(
      `namespace ${name}`,
      send('/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } }),
      201,
      409,
    );
  }
  await expect('the Lease to read', send(leases('bench'), { method: 'POST', body: lease('read-me', 'bench') }), 201);
  const load = (options) => runLoad({ token: server.token, ca: server.ca, concurrency: CONCURRENCY, seconds: SECONDS, warmupMs: WARMUP_MS, ...options });
  const creates = await load({ url: `${server.url}${leases('bench')}`, method: 'POST', body: JSON.stringify(lease('NAME', 'bench')) });
  const gets = await load({ url: `${server.url}${leases('bench')}/read-me`, method: 'GET' });
  await concurrently(LIST_SIZE, (i) => expect(`create l-${i}`, send(leases('listing'), { method: 'POST', body: lease(`l-${i}`, 'listing') }), 201));
  const times = [];
  let names = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const text = await expect('LIST', send(leases('listing')), 200);
    times.push(performance.now() - started);
    names = JSON.parse(text).items.map((item) => item.metadata.name);
  }
  if (names.length !== LIST_SIZE) throw new Error(`the LIST has ${names.length} Leases, not ${LIST_SIZE}`);
  times.sort((a, b) => a - b);
  const deleteSeconds = await concurrently(names.length, (i) =>
    expect(`delete ${names[i]}`, send(`${leases('listing')}/${names[i]}`, { method: 'DELETE' }), 200),
  );
  agent.destroy();
  return {
    creates: creates.rps,
    createP99: creates.p99,
    errors: creates.errors + gets.errors,
    gets: gets.rps,
    getP99: gets.p99,
    listMs: times[Math.floor(times.length / 2)],
    deletes: LIST_SIZE / deleteSeconds,
  };
}

async function measureBare(server) {
  const load = (options) => runLoad({ token: server.token, ca: server.ca, concurrency: CONCURRENCY, seconds: SECONDS, warmupMs: WARMUP_MS, ...options });
  const creates = await load({ url: `${server.url}${leases('bench')}`, method: 'POST', body: JSON.stringify(lease('NAME', 'bench')) });
  const gets = await load({ url: `${server.url}${leases('bench')}/read-me`, method: 'GET' });
  return { creates: creates.rps, createP99: creates.p99, errors: creates.errors + gets.errors, gets: gets.rps, getP99: gets.p99 };
}

/** The servers of one round, each started, measured, left idle, weighed and stopped in turn. */
function servers(dataDir, tlsDir) {
  const bare = (name, mode, count) => ({
    name,
    async run() {
      const child = await startChild([THIS_FILE, '--bare', mode, String(count), tlsDir]);
      try {
        const row = await measureBare(child);
        await idle();
        Object.assign(row, memory(child.pids));
        const last = await child.stop();
        return { ...row, connections: last?.connections?.join('/') };
      } finally {
        await child.stop();
      }
    },
  });
  const skiff = (name, workers) => ({
    name,
    async run() {
      const dir = mkdtempSync(join(dataDir, `skiff-${workers}-`));
      const child = await startChild([SERVE_BENCH, dir, String(workers)]);
      try {
        const row = await measureApiServer(child);
        await idle();
        return { ...row, ...memory(child.pids) };
      } finally {
        await child.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  });
  const upstream = {
    name: 'kube-apiserver 1.28.7 + etcd',
    async run() {
      const dir = mkdtempSync(join(dataDir, 'upstream-'));
      const running = [];
      try {
        const etcd = await startEtcd(dir);
        running.push(etcd);
        const apiserver = await startUpstream(dir, etcd.endpoint);
        running.push(apiserver);
        const row = await measureApiServer(apiserver);
        await idle();
        return { ...row, ...memory([apiserver.pid, etcd.pid]) };
      } finally {
        for (const started of running.reverse()) {
          started.stop();
          await started.exited;
        }
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  return [
    bare('fastify, 1 thread', 'threads', 1),
    bare(`fastify, ${WORKERS} threads`, 'threads', WORKERS),
    bare(`fastify, ${WORKERS} processes`, 'cluster', WORKERS),
    skiff('skiff, 1 worker', 1),
    skiff(`skiff, ${WORKERS} workers`, WORKERS),
    skiff(`skiff, up to ${WORKERS} on demand (default)`, `${WORKERS}:on-demand`),
    ...(existsSync(UPSTREAM_APISERVER) ? [upstream] : []),
  ];
}

const cell = (value, digits, width) => (value === undefined ? '-' : value.toFixed(digits)).padStart(width);

function printTable(rows) {
  console.log(
    'server'.padEnd(30),
    'creates/s'.padStart(10),
    'p99 ms'.padStart(8),
    'GETs/s'.padStart(8),
    'p99 ms'.padStart(8),
    'LIST ms'.padStart(8),
    'deletes/s'.padStart(10),
    'RSS MiB'.padStart(8),
    'PSS MiB'.padStart(8),
    '  connections per thread or process',
  );
  for (const [name, row] of rows)
    console.log(
      name.padEnd(30),
      cell(row.creates, 0, 10),
      cell(row.createP99, 2, 8),
      cell(row.gets, 0, 8),
      cell(row.getP99, 2, 8),
      cell(row.listMs, 1, 8),
      cell(row.deletes, 0, 10),
      cell(row.rss, 0, 8),
      cell(row.pss, 0, 8),
      ` ${row.connections ?? ''}`,
      row.errors ? ` (${row.errors} failed requests)` : '',
    );
}

async function main() {
  const started = performance.now();
  const loadAtStart = loadavg()[0];
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-workers-'));
  try {
    const tlsDir = join(dataDir, 'tls');
    mkdirSync(tlsDir);
    // RSA 2048, as Skiff's and upstream's serving certificates.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(tlsDir, 'key.pem'),
        '-out',
        join(tlsDir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=bench',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    if (!existsSync(UPSTREAM_APISERVER))
      console.log(`(no ${UPSTREAM_APISERVER}: upstream's kube-apiserver is left out; ../shared/upstream/README.md builds it)`);
    console.log(
      `${availableParallelism()} cores; HTTPS keep-alive, ${CONCURRENCY} clients, ${SECONDS} s per load; LIST of ${LIST_SIZE} Leases (median of 10); memory after ${IDLE_SECONDS} s idle`,
    );
    const results = new Map();
    for (let round = 1; round <= ROUNDS; round++) {
      const sequence = servers(dataDir, tlsDir);
      if (round % 2 === 0) sequence.reverse();
      const rows = [];
      for (const server of sequence) {
        const row = await server.run();
        rows.push([server.name, row]);
        results.set(server.name, [...(results.get(server.name) ?? []), row]);
      }
      rows.sort(([a], [b]) => [...results.keys()].indexOf(a) - [...results.keys()].indexOf(b));
      console.log(`\nround ${round} of ${ROUNDS}`);
      printTable(rows);
    }
    printRatios(results);
    // Other work on the machine shows here: the load average counts this run's own processes too.
    console.log(
      `\n(${((performance.now() - started) / 1000).toFixed(0)} s in all; load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end)`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function printRatios(results) {
  const median = (name, field) => {
    const values = (results.get(name) ?? []).map((row) => row[field]).filter((value) => value !== undefined);
    if (values.length === 0) return undefined;
    values.sort((a, b) => a - b);
    const middle = Math.floor(values.length / 2);
    return values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  };
  const ratio = (field, a, b, target) => {
    const [x, y] = [median(a, field), median(b, field)];
    if (x === undefined || y === undefined) return `${field} -`;
    const verdict = target === undefined ? '' : target(x / y) ? ' (target met)' : ' (target missed)';
    return `${field} ×${(x / y).toFixed(2)}${verdict}`;
  };
  const [skiff1, skiffN, upstream] = ['skiff, 1 worker', `skiff, ${WORKERS} workers`, 'kube-apiserver 1.28.7 + etcd'];
  const skiffDefault = `skiff, up to ${WORKERS} on demand (default)`;
  const [bare1, bareThreads, bareProcesses] = ['fastify, 1 thread', `fastify, ${WORKERS} threads`, `fastify, ${WORKERS} processes`];
  console.log(`\nratios of the medians over ${ROUNDS} round(s) (LIST: of the time, lower is better)`);
  // Against upstream's targets (issue 24): one thread, all cores from the start, and the default (cores on demand).
  if (results.has(upstream))
    for (const skiff of [skiff1, skiffN, skiffDefault])
      console.log(
        `${skiff} / upstream:`.padEnd(34),
        [
          ratio('creates', skiff, upstream, (r) => r >= 2),
          ratio('gets', skiff, upstream, (r) => r >= 3),
          ratio('listMs', skiff, upstream, (r) => r <= 1),
          ratio('deletes', skiff, upstream),
          ratio('rss', skiff, upstream),
          ...(skiff === skiffDefault
            ? [`idle RSS ${median(skiff, 'rss')?.toFixed(0)} MiB${median(skiff, 'rss') <= 150 ? ' (target ≤ 150 met)' : ' (target ≤ 150 missed)'}`]
            : []),
        ].join(', '),
      );
  console.log(
    `${skiffN} / ${skiff1}:`.padEnd(34),
    ['creates', 'gets', 'listMs', 'deletes', 'rss', 'pss'].map((field) => ratio(field, skiffN, skiff1)).join(', '),
  );
  console.log(`${skiff1} / ${bare1}:`.padEnd(34), ['creates', 'gets'].map((field) => ratio(field, skiff1, bare1)).join(', '));
  console.log(`${skiffN} / ${bareThreads}:`.padEnd(34), ['creates', 'gets'].map((field) => ratio(field, skiffN, bareThreads)).join(', '));
  console.log(
    `${bareThreads} / ${bareProcesses}:`.padEnd(34),
    ['creates', 'gets', 'rss', 'pss'].map((field) => ratio(field, bareThreads, bareProcesses)).join(', '),
  );
  console.log(`${bareThreads} / ${bare1}:`.padEnd(34), ['creates', 'gets'].map((field) => ratio(field, bareThreads, bare1)).join(', '));
}

if (!isMainThread) await serveBareThread(workerData);
else if (cluster.isWorker) await serveBareProcess(process.argv[5]);
else if (process.argv[2] === '--bare') await serveBare(process.argv[3], Number(process.argv[4]), process.argv[5]);
else await main();
