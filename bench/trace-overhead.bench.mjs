#!/usr/bin/env node
// What tracing costs the request path (docs/tracing.md). Three dev-preset clusters (no nodes) in this process,
// loaded in turn through the in-process request handler (the full pipeline: authentication, flow control,
// authorization, every admission plugin of the preset, validation, the LMDB write, the watch fan-out):
//   - baseline: a kernel built with `tracing: false` — no tracing check on any hook;
//   - tracing off: the default kernel, nothing armed (the check every request pays);
//   - tracing on: config trace.mode "on", every request recorded.
// ConfigMap creates per second, BENCH_ROUNDS (9) alternating rounds of BENCH_SECONDS (2) each; the comparison is the
// median of the per-round ratios to the baseline. Then a
// microbenchmark of one hook (6 promise taps) with and without the interceptor. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCluster, Kernel } from '@skiff/kernel';
import { benchAuth, TOKEN } from './bench-cluster.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ADMIN = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };

// benchAuth's token is not a loopback one: tracing `on` records requests from users, not the cluster's own clients.
const root = mkdtempSync(join(tmpdir(), 'skiff-bench-trace-'));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function cluster(name, { tracing = true, trace } = {}) {
  const kernel = await createCluster({
    cwd: root,
    config: { preset: 'dev', nodes: 0, port: 0, host: '127.0.0.1', dataDir: join(root, name), logLevel: 'warn', ...(trace ? { trace } : {}) },
    tracing,
  });
  kernel.use(benchAuth);
  await kernel.start();
  return { name, kernel, api: kernel.resolve('apiHandler'), token: TOKEN, created: 0 };
}

/** Creates ConfigMaps for `seconds` with CONCURRENCY requests in flight; answers creates per second. */
async function creates(target, seconds) {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const loop = async () => {
    while (performance.now() < deadline) {
      const name = `cm-${target.created++}`;
      const response = await target.api.handle({
        method: 'POST',
        path: '/api/v1/namespaces/default/configmaps',
        query: {},
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: { key: 'value' } },
      });
      if (response.status !== 201) throw new Error(`${target.name}: create answered ${response.status}: ${JSON.stringify(response.body)}`);
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return done / ((performance.now() - started) / 1000);
}

try {
  const targets = [
    await cluster('baseline', { tracing: false }),
    await cluster('off'),
    await cluster('on', { trace: { mode: 'on', idleSeconds: 3600, maxSeconds: 86400 } }),
  ];
  for (const target of targets) await creates(target, 1); // warm up
  const rates = new Map(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so drift (GC, LMDB growth, CPU boost) does not favour one.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) rates.get(target.name).push(await creates(target, SECONDS));
  }
  const base = median(rates.get('baseline'));
  // Each round measured all three back to back: the ratio within a round cancels the drift between rounds (the store
  // grows, GC and CPU boost vary), so the median of those ratios is the comparison.
  const ratio = (name) => median(rates.get(name).map((rate, round) => rate / rates.get('baseline')[round]));
  const row = (label, name) => {
    const m = median(rates.get(name));
    const all = rates
      .get(name)
      .map((r) => r.toFixed(0))
      .join(' ');
    const vs = name === 'baseline' ? '' : `${((ratio(name) - 1) * 100).toFixed(1).padStart(6)}% vs baseline (median of per-round ratios)`;
    console.log(`${label.padEnd(46)} ${m.toFixed(0).padStart(7)} creates/s  ${vs.padEnd(48)} rounds: ${all}`);
  };
  console.log(`ConfigMap creates through the full dev-preset pipeline, ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${SECONDS}s`);
  row('baseline: kernel without the tracing check', 'baseline');
  row('tracing off (the default)', 'off');
  row('tracing on (every request recorded)', 'on');
  const spans = targets[2].kernel.tracer.status();
  console.log(`tracing on held ${spans.held} spans (ring of ${spans.capacity}, ${spans.dropped} overwritten)`);
  // How many taps of traced hooks one create runs (each pays the check): counted on the baseline, after its rounds.
  let tapCalls = 0;
  for (const name of ['authenticate', 'flowControl', 'authorize', 'mutate', 'validate', 'audit'])
    targets[0].kernel.hooks[name].intercept({ tap: () => tapCalls++ });
  const counted = 200;
  for (let i = 0; i < counted; i++) {
    const response = await targets[0].api.handle({
      method: 'POST',
      path: '/api/v1/namespaces/default/configmaps',
      query: {},
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `counted-${i}` } },
    });
    if (response.status !== 201) throw new Error(`counting create answered ${response.status}`);
  }
  const tapsPerRequest = tapCalls / counted;
  for (const target of targets) await target.kernel.stop();

  // One hook, 6 promise taps, called a million times: the interceptor's per-tap cost when nothing is traced.
  const N = 1_000_000;
  const hookRate = async (tracing) => {
    const kernel = new Kernel({ tracing, logger: undefined });
    for (let i = 0; i < 6; i++) kernel.hooks.authorize.tapPromise(`tap-${i}`, async () => undefined);
    const attributes = { user: ADMIN, verb: 'get' };
    const started = performance.now();
    for (let i = 0; i < N; i++) await kernel.hooks.authorize.promise(attributes);
    return N / ((performance.now() - started) / 1000);
  };
  const hook = { without: [], with: [] };
  for (let round = 0; round < 5; round++) {
    hook.without.push(await hookRate(false));
    hook.with.push(await hookRate(true));
  }
  const without = median(hook.without);
  const withCheck = median(hook.with);
  console.log(`\nauthorize hook, 6 promise taps, ${N} calls, median of 5`);
  console.log(`${'without the interceptor'.padEnd(46)} ${(without / 1000).toFixed(0).padStart(7)}k calls/s`);
  console.log(
    `${'with it, tracing off'.padEnd(46)} ${(withCheck / 1000).toFixed(0).padStart(7)}k calls/s  ${((withCheck / without - 1) * 100).toFixed(1).padStart(6)}%`,
  );
  // The request path's share, from the two measurements above (the end-to-end rates vary more than the check costs).
  const perTapNs = Math.max(0, (1 / withCheck - 1 / without) / 6) * 1e9;
  const perRequestUs = 1e6 / base;
  const checkUs = (tapsPerRequest * perTapNs) / 1000;
  console.log(
    `\nper create: ${tapsPerRequest.toFixed(0)} taps of traced hooks × ${perTapNs.toFixed(0)} ns = ${checkUs.toFixed(2)} µs of ${perRequestUs.toFixed(0)} µs (${((checkUs / perRequestUs) * 100).toFixed(2)}%)`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
