#!/usr/bin/env node
// The request path now against an earlier one, in the same run: an API server (store + apiserver, all kinds
// registered) started from this checkout and from a checkout of an earlier commit, each in a child process
// of its own, measured the same way:
//   - idle memory after start (RSS and heap after a forced GC), and after every OpenAPI v3 document was served;
//   - creates/s of leases, configmaps and pods with JSON and with protobuf bodies (as kubectl 1.32+ send them);
//   - GET/s of one pod;
//   - LIST of 2,000 leases: p50 and p99 latency.
// The earlier commit (BENCH_BASELINE_REF, default below: main before the kinds work) is checked out under the
// system temp folder with `git archive`, given a hard-linked copy of node_modules and built once; later runs
// reuse it. Bounded in time: BENCH_SECONDS (default 3) per scenario; BENCH_ROUNDS (default 1) rounds, earlier and
// now alternating, medians shown. Each row also gives the CPU the API server thread spent per request, read from
// /proc, which does not depend on how fast the client could send. Needs `npm run build` first.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? '8c0a45d';

// The measuring script, written into each checkout so its bare imports resolve to that checkout's packages.
const MEASURE = String.raw`
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load as runLoad } from './.https-load.mjs';
import { CHAIN_STAGE, definePlugin, Kernel } from '@skiff/kernel';
import storePlugin from '@skiff/store';
import apiServerPlugin from '@skiff/apiserver';
import * as api from '@skiff/api';
// Protobuf encoding moved to its own entry point (@skiff/api/protobuf); older checkouts export it from the root.
const protobuf = await import('@skiff/api/protobuf').catch(() => api);

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = 16;
const TOKEN = 'bench-token';
function load(options) {
  return runLoad({ token: TOKEN, concurrency: CONCURRENCY, seconds: SECONDS, cpuOf: true, ...options });
}

function memory() {
  globalThis.gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss: rss / 1048576, heap: heapUsed / 1048576 };
}

const pod = (name) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'bench' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] } });
const lease = (name) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: 'bench', leaseDurationSeconds: 40 } });
const configMap = (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: { mode: 'fast', level: '3' } });

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-path-'));
const out = { memory: {}, rows: {} };
try {
  const benchAuth = definePlugin({
    name: 'bench-auth', version: '0.1.0', kernel: '^0.1.0',
    apply(kernel) {
      const user = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };
      kernel.hooks.authenticate.tap({ name: 'bench-auth', stage: CHAIN_STAGE.TOKEN }, (request) => (request.headers.authorization === 'Bearer ' + TOKEN ? { user } : undefined));
      kernel.hooks.authorize.tap('bench-auth', () => ({ decision: 'allow' }));
    },
  });
  const kernel = new Kernel({ config: { dataDir: join(dataDir, 'skiff'), host: '127.0.0.1', port: 0, logLevel: 'silent' } });
  kernel.use(storePlugin).use(apiServerPlugin).use(benchAuth);
  await kernel.start();
  const { url, caPem } = kernel.resolve('apiServerInfo');
  const handler = kernel.resolve('apiHandler');
  const call = (method, path, body, headers = {}) => handler.handle({ method, path, query: {}, headers: { authorization: 'Bearer ' + TOKEN, ...headers }, body });
  out.kinds = kernel.resolve('resourceRegistry').list().length;
  out.memory.idle = memory();
  const root = (await call('GET', '/openapi/v3')).body;
  for (const path of Object.keys(root.paths)) await call('GET', '/openapi/v3/' + path);
  out.memory.openapi = memory();

  const created = await call('POST', '/api/v1/namespaces/default/pods', pod('bench-get'));
  if (created.status !== 201) throw new Error('could not create the pod to read: ' + JSON.stringify(created.body));
  const measure = async (name, options) => (out.rows[name] = await load({ ca: caPem, ...options }));
  const PROTOBUF = 'application/vnd.kubernetes.protobuf';
  const protobufBodies = (make) => Array.from({ length: 30000 }, (_, i) => protobuf.encodeProtobufObject(make('b' + i.toString(36))));
  const kinds = [
    ['lease', '/apis/coordination.k8s.io/v1/namespaces/default/leases', lease],
    ['configmap', '/api/v1/namespaces/default/configmaps', configMap],
    ['pod', '/api/v1/namespaces/default/pods', pod],
  ];
  for (const [name, path, make] of kinds) {
    await measure('create ' + name + ' (JSON)', { url: url + path, method: 'POST', body: JSON.stringify(make('NAME')) });
    await measure('create ' + name + ' (protobuf)', { url: url + path, method: 'POST', bodies: protobufBodies(make), contentType: PROTOBUF });
  }
  await measure('GET pod', { url: url + '/api/v1/namespaces/default/pods/bench-get', method: 'GET' });
  for (let i = 0; i < 2000; i++) await call('POST', '/apis/coordination.k8s.io/v1/namespaces/list/leases', lease('l' + i));
  await measure('LIST 2,000 leases', { url: url + '/apis/coordination.k8s.io/v1/namespaces/list/leases', method: 'GET', count: 100 });
  await kernel.stop();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out) + '\n');
`;

function run(command, args, cwd) {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A built checkout of `ref`, made once and kept in the temp folder. */
function baselineCheckout(ref) {
  const sha = execFileSync('git', ['rev-parse', '--short=12', `${ref}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = join(tmpdir(), `skiff-bench-baseline-${sha}`);
  if (existsSync(join(dir, '.built'))) return { dir, sha };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  console.error(`preparing the baseline ${sha} in ${dir} (once)…`);
  const archive = execFileSync('git', ['archive', '--format=tar', sha], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  // Hard links: no copying of package contents; the workspace links are relative, so they point into the copy.
  run('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')], ROOT);
  run('npx', ['lerna', 'run', 'build', '--loglevel=error'], dir);
  writeFileSync(join(dir, '.built'), sha);
  return { dir, sha };
}

function measure(root) {
  const script = join(root, 'bench', '.api-path-measure.mjs');
  const loader = join(root, 'bench', '.https-load.mjs');
  mkdirSync(dirname(script), { recursive: true });
  writeFileSync(script, MEASURE);
  // The same load generator for both checkouts: this one's.
  copyFileSync(join(ROOT, 'bench', 'https-load.mjs'), loader);
  try {
    const result = spawnSync(process.execPath, ['--expose-gc', script], { cwd: root, encoding: 'utf8', env: process.env, maxBuffer: 1 << 26 });
    if (result.status !== 0) throw new Error(`measuring in ${root} failed:\n${result.stderr}`);
    return JSON.parse(result.stdout.trim().split('\n').pop());
  } finally {
    rmSync(script, { force: true });
    rmSync(loader, { force: true });
  }
}

const baseline = baselineCheckout(BASELINE_REF);
const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
// Rounds alternate earlier and now, so a machine that slows down part-way slows both; each cell is the median.
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));
const runs = { before: [], after: [] };
for (let round = 0; round < ROUNDS; round++) {
  runs.before.push(measure(baseline.dir));
  runs.after.push(measure(ROOT));
}

const median = (values) => {
  const known = values.filter((value) => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b);
  if (known.length === 0) return undefined;
  const middle = known.length >> 1;
  return known.length % 2 ? known[middle] : (known[middle - 1] + known[middle]) / 2;
};
/** The median of one field of one row (or memory entry) over the rounds. */
const rowMedian = (list, section, name, field) => median(list.map((out) => out[section][name]?.[field]));
const served = (list, name) => list.every((out) => out.rows[name] && out.rows[name].errors === 0 && out.rows[name].requests > 0);

const cell = (value, digits = 0) => (value === undefined ? '—' : value.toFixed(digits));
const ratio = (now, earlier) => (now === undefined || earlier === undefined ? '—' : `${((now / earlier) * 100).toFixed(0)}%`);
const first = runs.after[0];
console.log(`earlier path: ${baseline.sha} (${runs.before[0].kinds} resources); now: ${head} (${first.kinds} resources)`);
console.log(
  `HTTPS keep-alive, 16 concurrent requests, ${process.env.BENCH_SECONDS ?? 3} s per scenario; LIST: 100 sequential requests; ` +
    `${ROUNDS} round(s), earlier and now alternating, medians`,
);
console.log('server CPU: the µs the API server thread spent per request (from /proc, warm-up excluded), whatever the client could send');
console.log('memory (MB, after GC)'.padEnd(34), 'earlier'.padStart(16), 'now'.padStart(16));
for (const [name, key] of [
  ['idle after start', 'idle'],
  ['after every OpenAPI v3 document', 'openapi'],
]) {
  const pair = (list) => `${cell(rowMedian(list, 'memory', key, 'rss'), 1)} / ${cell(rowMedian(list, 'memory', key, 'heap'), 1)}`;
  console.log(name.padEnd(34), pair(runs.before).padStart(16), pair(runs.after).padStart(16), '  (rss / heap)');
}
console.log(
  'scenario'.padEnd(34),
  'earlier req/s'.padStart(14),
  'now req/s'.padStart(10),
  'now/earlier'.padStart(12),
  'CPU µs earlier'.padStart(15),
  'CPU µs now'.padStart(11),
  'now/earlier'.padStart(12),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'errors'.padStart(7),
);
for (const name of Object.keys(first.rows)) {
  const hadIt = served(runs.before, name);
  const at = (list, field) => rowMedian(list, 'rows', name, field);
  const cpuBefore = hadIt ? at(runs.before, 'cpuMicros') : undefined;
  const cpuNow = at(runs.after, 'cpuMicros');
  const errors = runs.after.reduce((sum, out) => sum + (out.rows[name]?.errors ?? 0), 0);
  const isList = name.startsWith('LIST');
  const before = hadIt ? at(runs.before, isList ? 'p50' : 'rps') : undefined;
  const now = at(runs.after, isList ? 'p50' : 'rps');
  console.log(
    name.padEnd(34),
    (isList ? `${cell(before, 1)} ms` : hadIt ? cell(before) : 'not served').padStart(14),
    (isList ? `${cell(now, 1)} ms` : cell(now)).padStart(10),
    (hadIt ? ratio(now, before) : '—').padStart(12),
    cell(cpuBefore).padStart(15),
    cell(cpuNow).padStart(11),
    ratio(cpuNow, cpuBefore).padStart(12),
    cell(at(runs.after, 'p50'), 2).padStart(8),
    cell(at(runs.after, 'p99'), 2).padStart(8),
    String(errors).padStart(7),
  );
}
