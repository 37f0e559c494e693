#!/usr/bin/env node
// The hostile-user probe suite (issue "Nothing stalls the server"): a real `skiff up` (dev preset, no nodes) and,
// for each case, one hostile request or load while a second client pings /healthz every 50 ms from its own thread.
// A case passes when it gets a 4xx Status (or succeeds where that is legitimate, as a YAML merge key) and no ping
// waited 1 s or more. Prints one row per case and exits non-zero when a case fails.
//
//   npm run probe                       # every case
//   npm run probe -- json-patch list    # the cases whose names contain one of the words
//   PROBE_PODS=3000 PROBE_LISTS=16      # the LIST flood's size (defaults shown)
//   PROBE_SERVER_NODE_ARGS=--cpu-prof   # node options for the server under test
//
// The disk-full case mounts a 20 MiB tmpfs for its own cluster's data dir (needs root). Needs `npm run build`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parse as parseYaml } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const SKIFF = join(here, '../node_modules/.bin/skiff');
const PODS = Number(process.env.PROBE_PODS ?? 3000);
const LISTS = Number(process.env.PROBE_LISTS ?? 16);
const IDLE_SOCKETS = Number(process.env.PROBE_IDLE_SOCKETS ?? 5000);
const PING_LIMIT_MS = 1000;
/** The server's RSS bound while lists flood it. */
const RSS_LIMIT_MIB = 1536;
/** Node options for the server under test, e.g. PROBE_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const SERVER_NODE_ARGS = (process.env.PROBE_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const wanted = process.argv.slice(2);

// ---------------------------------------------------------------------------------------------------
// A cluster in its own process, and plain HTTPS calls to it

async function startCluster(dataDir) {
  const child = spawn(process.execPath, [...SERVER_NODE_ARGS, SKIFF, 'up', '--nodes', '0', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const url = /^ready: (https:\/\/\S+)/m.exec(out)?.[1];
    const kubeconfig = /^kubeconfig: (\S+)/m.exec(out)?.[1];
    if (url && kubeconfig) {
      const config = parseYaml(readFileSync(kubeconfig, 'utf8'));
      const ca = Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64');
      const token = config.users[0].user.token;
      const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca });
      const cluster = {
        child,
        url,
        ca,
        token,
        agent,
        exited,
        stderr: () => err,
        alive: () => child.exitCode === null && child.signalCode === null,
        call: (method, path, options = {}) => call(cluster, method, path, options),
        async stop() {
          if (!cluster.alive()) return;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
          await exited;
          clearTimeout(timer);
        },
      };
      return cluster;
    }
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`skiff up did not become ready:\n${err.slice(-2000)}`);
}

/** One request; answers { status, body, headers, ms } or { error, ms }. `body` objects are sent as JSON. */
function call(cluster, method, path, { body, contentType, token = cluster.token, timeoutMs = 120_000, agent = cluster.agent } = {}) {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const headers = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (payload !== undefined) {
      headers['content-type'] = contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const started = performance.now();
    const req = https.request(`${cluster.url}${path}`, { method, agent, headers, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode, body: parsed, text, headers: res.headers, ms: performance.now() - started });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => resolve({ error: e.message, ms: performance.now() - started }));
    req.end(payload);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// The pinger: its own thread, so a busy probe client never delays a ping. It also samples the server's RSS.

const PINGER = `
const { parentPort, workerData } = require('node:worker_threads');
const https = require('node:https');
const { readFileSync } = require('node:fs');
const { url, ca, token, pid, path, intervalMs } = workerData;
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
let stopped = false;
parentPort.on('message', (m) => { if (m === 'stop') stopped = true; });
function rss() {
  try { return Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/' + pid + '/status', 'utf8'))[1]) * 1024; } catch { return 0; }
}
function ping() {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = https.get(url + path, { agent, headers: { authorization: 'Bearer ' + token } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }));
    });
    req.on('error', () => resolve({ ok: false, ms: performance.now() - started }));
  });
}
(async () => {
  while (!stopped) {
    const at = Date.now();
    const result = await ping();
    parentPort.postMessage({ at, ms: result.ms, ok: result.ok, rss: rss() });
    await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - result.ms)));
  }
  parentPort.postMessage('stopped');
})();
`;

/** GETs `path` every `intervalMs` from a worker thread (default: /healthz every 50 ms as the admin). */
function startPinger(cluster, { path = '/healthz', token = cluster.token, intervalMs = 50 } = {}) {
  const samples = [];
  const worker = new Worker(PINGER, {
    eval: true,
    workerData: { url: cluster.url, ca: cluster.ca, token, pid: cluster.child.pid, path, intervalMs },
  });
  worker.on('message', (m) => m !== 'stopped' && samples.push(m));
  return {
    /** The slowest ping, failed pings and peak RSS since `from` (a Date.now()). */
    window(from) {
      const inside = samples.filter((s) => s.at + s.ms >= from);
      return {
        maxMs: Math.max(0, ...inside.map((s) => s.ms)),
        latencies: inside.map((s) => (s.ok ? s.ms : Infinity)),
        failed: inside.filter((s) => !s.ok).length,
        pings: inside.length,
        peakRss: Math.max(0, ...inside.map((s) => s.rss)),
      };
    },
    async stop() {
      worker.postMessage('stop');
      await new Promise((resolve) => worker.on('message', (m) => m === 'stopped' && resolve()));
      await worker.terminate();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Helpers for cases

const is4xx = (a) => a.status >= 400 && a.status < 500 && a.body?.kind === 'Status';
const is2xx = (a) => a.status >= 200 && a.status < 300;
const describeAnswer = (a) =>
  a.error ? `error: ${a.error}` : `${a.status} ${a.body?.reason ?? ''}${a.body?.message ? `: ${String(a.body.message).slice(0, 110)}` : ''}`;

async function ensureNamespace(cluster, name) {
  await cluster.call('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
}

async function createCrd(cluster, plural, kind, specSchema) {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.probe.skiff.dev` },
    spec: {
      group: 'probe.skiff.dev',
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: specSchema } } },
        },
      ],
    },
  };
  const answer = await cluster.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  if (is2xx(answer)) {
    // Served once Established; give it a moment.
    for (let i = 0; i < 100; i++) {
      const probe = await cluster.call('GET', `/apis/probe.skiff.dev/v1/namespaces/probe/${plural}`);
      if (probe.status === 200) break;
      await sleep(50);
    }
  }
  return answer;
}

/** A CEL case: the CRD is refused (a 4xx naming the rule) or the custom resource gets a 4xx or is accepted. */
async function celCase(cluster, plural, kind, specSchema, spec) {
  const crd = await createCrd(cluster, plural, kind, specSchema);
  if (!is2xx(crd)) return { answer: crd, note: 'CRD refused' };
  const answer = await cluster.call('POST', `/apis/probe.skiff.dev/v1/namespaces/probe/${plural}`, {
    body: { apiVersion: 'probe.skiff.dev/v1', kind, metadata: { name: 'x' }, spec },
  });
  // Accepted is fine too when it was quick: the pings say whether it was.
  return { answer, ok: is4xx(answer) || is2xx(answer), note: 'custom resource' };
}

const deployment = (name, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
  },
});

async function serviceAccountToken(cluster, name) {
  await cluster.call('POST', '/api/v1/namespaces/probe/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  const answer = await cluster.call('POST', `/api/v1/namespaces/probe/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  if (!is2xx(answer)) throw new Error(`token for ${name}: ${describeAnswer(answer)}`);
  return answer.body.status.token;
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

// ---------------------------------------------------------------------------------------------------
// The cases. Each answers { answer, ok?, note? }: `ok` overrides the default verdict (a 4xx Status).

const CASES = [
  {
    name: 'cel-replace-chain',
    what: 'CRD rule with eight chained replace() calls, then one custom resource',
    run: (c) =>
      celCase(
        c,
        'chains',
        'Chain',
        {
          type: 'object',
          properties: { s: { type: 'string' } },
          'x-kubernetes-validations': [
            {
              rule: "self.s.replace('a','aa').replace('a','aa').replace('a','aa').replace('a','aa').replace('a','aa').replace('a','aa').replace('a','aa').replace('a','aa') != ''",
            },
          ],
        },
        { s: 'a'.repeat(200_000) },
      ),
  },
  {
    name: 'cel-replace-600k',
    what: "rule self.replace('-','_') != 'x' on a 600 KB string",
    run: (c) =>
      celCase(
        c,
        'dashes',
        'Dash',
        { type: 'object', properties: { s: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.replace('-','_') != 'x'" }] } } },
        { s: '-'.repeat(600_000) },
      ),
  },
  {
    name: 'cel-nested-all',
    what: 'four nested all() over a list without maxItems',
    run: (c) =>
      celCase(
        c,
        'nests',
        'Nest',
        {
          type: 'object',
          properties: { xs: { type: 'array', items: { type: 'integer' } } },
          'x-kubernetes-validations': [{ rule: 'self.xs.all(a, self.xs.all(b, self.xs.all(c, self.xs.all(d, a + b + c + d >= 0))))' }],
        },
        { xs: Array.from({ length: 60 }, (_, i) => i) },
      ),
  },
  {
    name: 'crd-long-pattern',
    what: 'CRD whose schema has a 100,000-character pattern (compiling it took 71 s)',
    run: async (c) => ({
      answer: await createCrd(c, 'patterns', 'Pattern', { type: 'object', properties: { s: { type: 'string', pattern: 'a'.repeat(100_000) } } }),
    }),
  },
  {
    name: 'json-patch-self-copy',
    what: 'a ~1.6 KB JSON patch that copies a value into itself 22 times (the document doubles each time)',
    async run(c) {
      await c.call('POST', '/api/v1/namespaces/probe/configmaps', {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'grow', annotations: {} }, data: { a: 'x' } },
      });
      // Each copy puts the whole annotations object inside itself: the document doubles 22 times unless stopped.
      const grow = [{ op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(64) } }];
      for (let i = 0; i < 22; i++) grow.push({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/k${i}` });
      const answer = await c.call('PATCH', '/api/v1/namespaces/probe/configmaps/grow', {
        contentType: 'application/json-patch+json',
        body: JSON.stringify(grow),
      });
      return { answer, note: `${JSON.stringify(grow).length} B patch` };
    },
  },
  {
    name: 'json-patch-ops-10001',
    what: 'a JSON patch of 10,001 operations',
    async run(c) {
      await c.call('POST', '/api/v1/namespaces/probe/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ops' } } });
      const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: 'ops' }));
      const answer = await c.call('PATCH', '/api/v1/namespaces/probe/configmaps/ops', {
        contentType: 'application/json-patch+json',
        body: JSON.stringify(ops),
      });
      return { answer };
    },
  },
  {
    name: 'smp-40k-containers',
    what: 'a strategic merge patch adding 40,000 containers to a Deployment',
    async run(c) {
      await c.call('POST', '/apis/apps/v1/namespaces/probe/deployments', { body: deployment('wide') });
      const containers = Array.from({ length: 40_000 }, (_, i) => ({ name: `c${i}`, image: 'busybox' }));
      const answer = await c.call('PATCH', '/apis/apps/v1/namespaces/probe/deployments/wide', {
        contentType: 'application/strategic-merge-patch+json',
        body: { spec: { template: { spec: { containers } } } },
      });
      return { answer };
    },
  },
  {
    name: 'managed-fields-19k',
    what: 'an update carrying 19,000 managedFields entries',
    async run(c) {
      const created = await c.call('POST', '/api/v1/namespaces/probe/configmaps', {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'managers' }, data: { a: 'x' } },
      });
      const object = created.body;
      object.metadata.managedFields = Array.from({ length: 19_000 }, (_, i) => ({
        manager: `m${i}`,
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { f: { data: { [`f:k${i}`]: {} } } },
      }));
      const answer = await c.call('PUT', '/api/v1/namespaces/probe/configmaps/managers', { body: object });
      const after = is2xx(answer) ? (answer.body.metadata.managedFields ?? []).length : undefined;
      return { answer, ok: is4xx(answer) || (is2xx(answer) && after < 100), note: after === undefined ? '' : `${after} entries kept` };
    },
  },
  {
    name: 'merge-patch-130k-fields',
    what: 'a merge patch changing ~130,000 fields',
    async run(c) {
      await c.call('POST', '/api/v1/namespaces/probe/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'many' } } });
      const data = {};
      for (let i = 0; i < 130_000; i++) data[`k${i}`] = 'v';
      const answer = await c.call('PATCH', '/api/v1/namespaces/probe/configmaps/many', { contentType: 'application/merge-patch+json', body: { data } });
      return { answer, ok: is4xx(answer) || is2xx(answer) };
    },
  },
  {
    name: 'scale-int32-overflow',
    what: 'PUT deployments/x/scale with replicas 2147483648',
    async run(c) {
      await c.call('POST', '/apis/apps/v1/namespaces/probe/deployments', { body: deployment('big') });
      const answer = await c.call('PUT', '/apis/apps/v1/namespaces/probe/deployments/big/scale', {
        body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'big', namespace: 'probe' }, spec: { replicas: 2147483648 } },
      });
      const stored = await c.call('GET', '/apis/apps/v1/namespaces/probe/deployments/big');
      return { answer, ok: is4xx(answer) && stored.body?.spec?.replicas === 1, note: `stored replicas ${stored.body?.spec?.replicas}` };
    },
  },
  {
    name: 'replicas-1e3',
    what: 'a Deployment with "replicas": 1e3',
    async run(c) {
      const body = JSON.stringify(deployment('exp')).replace('"replicas":1', '"replicas":1e3');
      return { answer: await c.call('POST', '/apis/apps/v1/namespaces/probe/deployments', { body }) };
    },
  },
  {
    name: 'watch-timeout-overflow',
    what: 'a watch with timeoutSeconds=3000000 stays open',
    async run(c) {
      const started = performance.now();
      const closedAfter = await new Promise((resolve) => {
        const req = https.get(
          `${c.url}/api/v1/namespaces/probe/configmaps?watch=true&timeoutSeconds=3000000`,
          { agent: false, ca: c.ca, headers: { authorization: `Bearer ${c.token}` } },
          (res) => {
            res.resume();
            const timer = setTimeout(() => {
              req.destroy();
              resolve({ status: res.statusCode, openMs: 3000 });
            }, 3000);
            res.on('end', () => {
              clearTimeout(timer);
              resolve({ status: res.statusCode, openMs: performance.now() - started });
            });
          },
        );
        req.on('error', () => {});
      });
      const answer = {
        status: closedAfter.status,
        body: { kind: 'Status', reason: closedAfter.openMs >= 3000 ? 'stayed open 3 s' : `closed after ${Math.round(closedAfter.openMs)} ms` },
        ms: closedAfter.openMs,
      };
      return { answer, ok: closedAfter.status === 200 && closedAfter.openMs >= 3000 };
    },
  },
  {
    name: 'long-url',
    what: 'a GET whose URL is 20 KiB long',
    async run(c) {
      const answer = await c.call('GET', `/api/v1/namespaces/probe/configmaps?labelSelector=${'a'.repeat(20 * 1024)}`, {
        agent: new https.Agent({ keepAlive: false, ca: c.ca }),
      });
      return { answer };
    },
  },
  {
    name: 'yaml-merge-key',
    what: 'a YAML ConfigMap using an anchor and a << merge key',
    async run(c) {
      const yaml = [
        'apiVersion: v1',
        'kind: ConfigMap',
        'metadata:',
        '  name: merged',
        '  labels: &common',
        '    app: web',
        'data:',
        '  <<: *common',
        '  extra: "1"',
        '',
      ].join('\n');
      const answer = await c.call('POST', '/api/v1/namespaces/probe/configmaps', { body: yaml, contentType: 'application/yaml' });
      return { answer, ok: is2xx(answer) && answer.body?.data?.app === 'web', note: `data ${JSON.stringify(answer.body?.data ?? null)}` };
    },
  },
  {
    name: 'list-flood',
    what: `${LISTS} concurrent unpaginated LISTs of ${PODS} pods by one identity, GETs by another`,
    async run(c) {
      const flooder = await serviceAccountToken(c, 'flooder');
      const readerToken = await serviceAccountToken(c, 'reader');
      await c.call('POST', '/api/v1/namespaces/probe/configmaps', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'read-me' } } });
      await ensureNamespace(c, 'flood');
      const pod = (i) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${i}`, labels: { app: 'flood', index: String(i) }, annotations: { note: 'x'.repeat(512) } },
        spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'], env: [{ name: 'A', value: 'b'.repeat(64) }] }] },
      });
      for (let i = 0; i < PODS; i += 32) {
        await Promise.all(Array.from({ length: Math.min(32, PODS - i) }, (_, j) => c.call('POST', '/api/v1/namespaces/flood/pods', { body: pod(i + j) })));
      }
      const from = Date.now();
      // The reader runs in its own thread too: this thread spends its time parsing the lists.
      const reader = startPinger(c, { path: '/api/v1/namespaces/probe/configmaps/read-me', token: readerToken, intervalMs: 20 });
      const floodAgent = new https.Agent({ keepAlive: true, maxSockets: LISTS, ca: c.ca });
      const lists = await Promise.all(
        Array.from({ length: LISTS }, () => c.call('GET', '/api/v1/namespaces/flood/pods', { token: flooder, agent: floodAgent })),
      );
      const { latencies } = reader.window(from);
      await reader.stop();
      const codes = {};
      for (const l of lists) codes[l.status ?? 'error'] = (codes[l.status ?? 'error'] ?? 0) + 1;
      const p99 = percentile(latencies, 99);
      const fullLists = lists.filter((l) => l.status === 200 && l.body?.items?.length === PODS).length;
      const answer = { status: 200, body: { kind: 'Status', reason: `LIST answers ${JSON.stringify(codes)}` }, ms: Date.now() - from };
      return {
        answer,
        ok: p99 < 1000 && (fullLists > 0 || lists.every((l) => l.status === 429)),
        note: `reader GETs n=${latencies.length} p50 ${percentile(latencies, 50).toFixed(0)} ms p99 ${p99.toFixed(0)} ms; ${fullLists} full lists`,
        measureRss: true,
      };
    },
  },
  {
    name: 'idle-sockets',
    what: `${IDLE_SOCKETS} idle sockets (no TLS handshake, and handshaken ones with no request), then an authenticated GET`,
    async run(c) {
      const { port, hostname } = new URL(c.url);
      const sockets = [];
      const opened = [];
      for (let i = 0; i < IDLE_SOCKETS; i++) {
        const raw = i % 10 !== 0;
        opened.push(
          new Promise((resolve) => {
            const s = raw
              ? net.connect({ host: hostname, port: Number(port) }, () => resolve(true))
              : tls.connect({ host: hostname, port: Number(port), ca: c.ca, servername: 'localhost', rejectUnauthorized: false }, () => resolve(true));
            s.on('error', () => resolve(false));
            s.on('close', () => resolve(false));
            sockets.push(s);
          }),
        );
        if (i % 500 === 499) await sleep(10);
      }
      const connected = (await Promise.all(opened)).filter(Boolean).length;
      const fresh = new https.Agent({ keepAlive: false, ca: c.ca });
      const answer = await c.call('GET', '/api/v1/namespaces/probe/configmaps', { agent: fresh, timeoutMs: 10_000 });
      for (const s of sockets) s.destroy();
      return { answer, ok: answer.status === 200 && answer.ms < PING_LIMIT_MS, note: `${connected} sockets connected; GET in ${answer.ms?.toFixed(0)} ms` };
    },
  },
];

/** Disk full: its own cluster on a 20 MiB tmpfs. */
const DISK_CASE = {
  name: 'disk-full',
  what: 'a 20 MiB data disk fills up: writes get a Status, reads keep working, writes work again once space returns',
  async run() {
    const mount = mkdtempSync(join(tmpdir(), 'skiff-probe-disk-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=20m', 'tmpfs', mount], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`mount tmpfs: ${mounted.stderr.trim()} (the disk-full case needs root)`);
    let cluster;
    let pinger;
    try {
      cluster = await startCluster(join(mount, 'data'));
      pinger = startPinger(cluster);
      const from = Date.now();
      const filler = join(mount, 'filler');
      mkdirSync(filler, { recursive: true });
      // Most of the space goes to a plain file, the rest to ConfigMaps of 256 KiB until a write fails.
      writeFileSync(join(filler, 'a'), Buffer.alloc(12 * 1024 * 1024));
      let failed;
      let written = 0;
      for (let i = 0; i < 200 && !failed; i++) {
        const a = await cluster.call('POST', '/api/v1/namespaces/default/configmaps', {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `fill-${i}` }, data: { v: 'x'.repeat(256 * 1024) } },
        });
        if (is2xx(a)) written++;
        else failed = a;
      }
      if (!failed) return { answer: { status: 0, error: 'the disk never filled' }, ok: false };
      const read = await cluster.call('GET', '/api/v1/namespaces/default/configmaps/fill-0');
      const list = await cluster.call('GET', '/api/v1/namespaces/default/configmaps?limit=5');
      rmSync(filler, { recursive: true, force: true });
      let again;
      for (let i = 0; i < 20; i++) {
        again = await cluster.call('POST', '/api/v1/namespaces/default/configmaps', {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `after-${i}` }, data: { v: 'y' } },
        });
        if (is2xx(again)) break;
        await sleep(250);
      }
      const alive = cluster.alive();
      const pings = pinger.window(from);
      const ok = failed.status >= 400 && failed.body?.kind === 'Status' && read.status === 200 && list.status === 200 && is2xx(again) && alive;
      return {
        answer: failed,
        ok,
        pings,
        note: `${written} written before full; read ${read.status}, list ${list.status}, write after freeing ${again?.status}, server ${alive ? 'alive' : 'DEAD'}`,
      };
    } finally {
      await pinger?.stop();
      await cluster?.stop();
      spawnSync('umount', ['-l', mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  },
};

// ---------------------------------------------------------------------------------------------------

const selected = [...CASES, DISK_CASE].filter((c) => wanted.length === 0 || wanted.some((w) => c.name.includes(w)));
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-probe-'));
const cluster = await startCluster(join(dataDir, 'skiff'));
const pinger = startPinger(cluster);
await ensureNamespace(cluster, 'probe');
const rows = [];
let failures = 0;
for (const probe of selected) {
  const from = Date.now();
  let result;
  try {
    result = await probe.run(cluster);
  } catch (err) {
    result = { answer: { error: err.message }, ok: false };
  }
  const pings = result.pings ?? pinger.window(from);
  const answered = result.answer;
  const rssOk = !result.measureRss || pings.peakRss <= RSS_LIMIT_MIB * 1024 * 1024;
  const verdictOk = (result.ok ?? is4xx(answered)) && pings.maxMs < PING_LIMIT_MS && pings.failed === 0 && rssOk;
  if (!verdictOk) failures++;
  rows.push({
    case: probe.name,
    verdict: verdictOk ? 'ok' : 'FAIL',
    answer: describeAnswer(answered),
    'took ms': Math.round(Date.now() - from),
    'max ping ms': pings.pings ? Math.round(pings.maxMs) : '-',
    'peak RSS MiB': Math.round(pings.peakRss / 1024 / 1024),
    note: result.note ?? '',
  });
  console.log(
    `${verdictOk ? 'ok  ' : 'FAIL'} ${probe.name}: ${describeAnswer(answered)} | ${Math.round(Date.now() - from)} ms | max ping ${pings.pings ? `${Math.round(pings.maxMs)} ms` : '- (no ping ended meanwhile)'} | ${result.note ?? ''}`,
  );
  if (probe !== DISK_CASE && !cluster.alive()) {
    console.log(`the server died during ${probe.name}:\n${cluster.stderr().slice(-2000)}`);
    failures++;
    break;
  }
}
await pinger.stop();
await cluster.stop();
rmSync(dataDir, { recursive: true, force: true });
console.log('');
console.table(rows);
console.log(
  `probe: ${rows.length - failures} of ${rows.length} cases ok (a case is ok with a 4xx Status or a legitimate success and no /healthz ping ≥ ${PING_LIMIT_MS} ms)`,
);
process.exit(failures ? 1 : 0);
