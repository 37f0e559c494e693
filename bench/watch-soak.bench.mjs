#!/usr/bin/env node
// Watch soak: a real `skiff up` under --max-old-space-size=128 holds SOAK_WATCHES watches while
// SOAK_WRITES Leases are created, updated, then deleted (three rounds). After each round the server is
// asked for a forced GC and its memory (bench/soak-probe.mjs). At the end every watch must have seen
// every event exactly once and in revision order, and the heap after the watches end must be back
// within SOAK_HEAP_SLACK_MB of where it was before they started. The baseline in the same run is the
// server's own heap before any watch opened. Exits non-zero when a check fails, so CI runs it too
// (integration-tests/watch-soak.test.ts, with small numbers). By hand: `node bench/watch-soak.bench.mjs`
// (defaults: 200 watches × 1,000 writes × 3 rounds). SOAK_WORKERS=N serves the API on N threads (config
// apiServer.workers): watches and writes then spread over the threads, and every watch must still see every write
// once and in order; the heap figures are then the primary thread's. Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const WATCHES = Number(process.env.SOAK_WATCHES ?? 200);
const WRITES = Number(process.env.SOAK_WRITES ?? 1000);
const HEAP_MB = Number(process.env.SOAK_HEAP_MB ?? 128);
const SLACK_MB = Number(process.env.SOAK_HEAP_SLACK_MB ?? 10);
const WRITE_CONCURRENCY = 16;
const NAMESPACE = 'soak';
const MB = 1024 * 1024;

const WORKERS = Number(process.env.SOAK_WORKERS ?? 1);
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-soak-'));
const configFile = join(dataDir, 'skiff.config.mjs');
writeFileSync(configFile, `export default { apiServer: { workers: ${WORKERS}, workerStart: 'at-start' } };\n`);
const server = spawn(
  process.execPath,
  [
    `--max-old-space-size=${HEAP_MB}`,
    '--expose-gc',
    '--import',
    join(here, 'soak-probe.mjs'),
    join(here, '../node_modules/.bin/skiff'),
    'up',
    '--nodes',
    '0',
    '--port',
    '0',
    '--data-dir',
    join(dataDir, 'data'),
    '--config',
    configFile,
    '--log-level',
    'warn',
  ],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
let serverOut = '';
let serverErr = '';
const memoryWaiters = [];
server.stdout.on('data', (d) => (serverOut += d));
server.stderr.on('data', (d) => {
  serverErr += d;
  for (const match of String(d).matchAll(/^SOAK-MEMORY (.*)$/gm)) memoryWaiters.shift()?.(JSON.parse(match[1]));
});
const exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));

function fail(message) {
  console.error(`watch soak FAILED: ${message}`);
  if (serverErr.trim()) console.error(`server stderr (last 2,000 characters):\n${serverErr.slice(-2000)}`);
  server.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
}
exited.then(({ code, signal }) => !stopping && fail(`the server exited (code ${code}, signal ${signal})`));
let stopping = false;

async function ready() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const url = /^ready: (https:\/\/\S+)/m.exec(serverOut)?.[1];
    const kubeconfig = /^kubeconfig: (\S+)/m.exec(serverOut)?.[1];
    if (url && kubeconfig) return { url, kubeconfig };
    await new Promise((r) => setTimeout(r, 50));
  }
  fail('the server was not ready within 60 s');
}

/** The server's memory after a forced GC. */
function serverMemory() {
  return new Promise((resolve) => {
    memoryWaiters.push(resolve);
    server.kill('SIGUSR2');
  });
}

const { url, kubeconfig } = await ready();
const config = parseYaml(readFileSync(kubeconfig, 'utf8'));
const ca = Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64');
const token = config.users[0].user.token;
const writeAgent = new https.Agent({ keepAlive: true, maxSockets: WRITE_CONCURRENCY, ca });
const watchAgent = new https.Agent({ keepAlive: false, maxSockets: WATCHES + 1, ca });
const base = `${url}/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`;

function call(method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (payload) headers['content-type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const req = https.request(path, { method, agent: writeAgent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** One watch from `fromRevision`, collecting every event until closed. */
function openWatch(fromRevision) {
  const watch = { events: [], errors: [], request: undefined };
  watch.opened = new Promise((resolve, reject) => {
    watch.request = https.get(
      `${base}?watch=true&resourceVersion=${fromRevision}`,
      { agent: watchAgent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
        resolve();
        let partial = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          const lines = (partial + chunk).split('\n');
          partial = lines.pop();
          for (const line of lines) {
            if (!line) continue;
            const event = JSON.parse(line);
            if (event.type === 'ERROR') watch.errors.push(event.object.message);
            else watch.events.push({ type: event.type, name: event.object.metadata.name, revision: Number(event.object.metadata.resourceVersion) });
          }
        });
        res.on('error', () => undefined);
      },
    );
    watch.request.on('error', (error) => (watch.closing ? undefined : reject(error)));
  });
  return watch;
}

const ROUNDS = ['create', 'update', 'delete'];
const EXPECTED_TYPE = { create: 'ADDED', update: 'MODIFIED', delete: 'DELETED' };

async function writeAll(round) {
  let next = 0;
  const worker = async () => {
    while (next < WRITES) {
      const name = `lease-${next++}`;
      if (round === 'create')
        await call('POST', base, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'soak' } });
      else if (round === 'update') await call('PATCH', `${base}/${name}`, { spec: { holderIdentity: 'soak-updated' } });
      else await call('DELETE', `${base}/${name}`);
    }
  };
  await Promise.all(Array.from({ length: WRITE_CONCURRENCY }, worker));
}

/** Every watch saw exactly this round's events, each name once, in strictly increasing revision order. */
function checkRound(watches, round, offset) {
  for (const [index, watch] of watches.entries()) {
    if (watch.errors.length) fail(`watch ${index} got ERROR events: ${watch.errors.join('; ')}`);
    const events = watch.events.slice(offset, offset + WRITES);
    if (watch.events.length !== offset + WRITES) fail(`watch ${index} has ${watch.events.length - offset} events after the ${round} round, expected ${WRITES}`);
    const names = new Set();
    let last = 0;
    for (const event of events) {
      if (event.type !== EXPECTED_TYPE[round]) fail(`watch ${index} got ${event.type} ${event.name} in the ${round} round`);
      if (event.revision <= last) fail(`watch ${index}: revision ${event.revision} after ${last}`);
      last = event.revision;
      names.add(event.name);
    }
    if (names.size !== WRITES) fail(`watch ${index} saw ${names.size} distinct leases in the ${round} round, expected ${WRITES}`);
  }
}

const mb = (bytes) => (bytes / MB).toFixed(1);
const report = [];
const sample = async (label) => {
  const memory = await serverMemory();
  report.push({ label, ...memory });
  console.log(`${label.padEnd(28)} rss ${mb(memory.rss).padStart(7)} MB   heap used ${mb(memory.heapUsed).padStart(6)} MB`);
  return memory;
};

console.log(
  `watch soak: ${WATCHES} watches, ${WRITES} writes × ${ROUNDS.length} rounds, server heap limit ${HEAP_MB} MB, ${WORKERS} API thread${WORKERS === 1 ? '' : 's'}`,
);
await call('POST', `${url}/api/v1/namespaces`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
await new Promise((r) => setTimeout(r, 500));
const start = await sample('start (before watches)');
const list = await call('GET', base);
const watches = Array.from({ length: WATCHES }, () => openWatch(list.metadata.resourceVersion));
await Promise.all(watches.map((watch) => watch.opened)).catch((error) => fail(`opening the watches: ${error.message}`));
await sample(`${WATCHES} watches open`);
const started = Date.now();
for (const [index, round] of ROUNDS.entries()) {
  const roundStart = Date.now();
  await writeAll(round).catch((error) => fail(`${round} round: ${error.message}`));
  const deadline = Date.now() + 60_000;
  while (watches.some((watch) => watch.events.length < (index + 1) * WRITES) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  checkRound(watches, round, index * WRITES);
  const seconds = (Date.now() - roundStart) / 1000;
  await sample(`after ${round} (${(WRITES / seconds).toFixed(0)} writes/s)`);
}
const delivered = watches.reduce((sum, watch) => sum + watch.events.length, 0);
console.log(`${delivered} events delivered in ${((Date.now() - started) / 1000).toFixed(1)} s, each once and in order`);
for (const watch of watches) {
  watch.closing = true;
  watch.request.destroy();
}
await new Promise((r) => setTimeout(r, 1000));
const end = await sample('watches closed');
const growth = (end.heapUsed - start.heapUsed) / MB;
console.log(`heap used after the watches ended: ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB against the start (allowed: ${SLACK_MB} MB)`);
stopping = true;
server.kill('SIGINT');
await exited;
writeAgent.destroy();
watchAgent.destroy();
rmSync(dataDir, { recursive: true, force: true });
if (growth > SLACK_MB) {
  console.error(`watch soak FAILED: the heap grew by ${growth.toFixed(1)} MB`);
  process.exit(1);
}
console.log('watch soak passed');
