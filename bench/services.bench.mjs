#!/usr/bin/env node
// Creating Services with ClusterIP allocation (@skiff/plugin-service-allocator: one IPAddress created per
// Service, in the request) against creating ConfigMaps, in the same run, over HTTPS keep-alive:
//   - 1,000 of each, one after another (creates/s from the wall-clock time of the 1,000);
//   - then 16 clients at once for BENCH_SECONDS (default 3) each.
// Each scenario runs twice, ConfigMaps and Services taking turns, and the better run of each is shown, so a
// busy neighbour on a shared machine or the order of the runs does not decide the comparison.
// The load runs in a worker thread so client and server do not share an event loop. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load as runLoad } from './https-load.mjs';
import { CHAIN_STAGE, definePlugin, Kernel } from '@skiff/kernel';
import storePlugin from '@skiff/store';
import apiServerPlugin from '@skiff/apiserver';
import serviceAllocator from '@skiff/plugin-service-allocator';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const COUNT = Number(process.env.BENCH_COUNT ?? 1000);
const TOKEN = 'bench-token';

const configMap = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'NAME', labels: { app: 'bench' } }, data: { mode: 'fast' } });
const service = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'NAME', labels: { app: 'bench' } },
  spec: { selector: { app: 'bench' }, ports: [{ port: 80, targetPort: 8080 }] },
});

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-services-'));
try {
  const benchAuth = definePlugin({
    name: 'bench-auth',
    version: '0.1.0',
    kernel: '^0.1.0',
    apply(kernel) {
      const user = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };
      kernel.hooks.authenticate.tap({ name: 'bench-auth', stage: CHAIN_STAGE.TOKEN }, (request) =>
        request.headers.authorization === `Bearer ${TOKEN}` ? { user } : undefined,
      );
    },
  });
  const kernel = new Kernel({ config: { dataDir: join(dataDir, 'skiff'), host: '127.0.0.1', port: 0, logLevel: 'silent' } });
  kernel.use(storePlugin).use(apiServerPlugin).use(benchAuth).use(serviceAllocator, { repairIntervalMs: 600_000 });
  await kernel.start();
  const { url, caPem } = kernel.resolve('apiServerInfo');
  const collection = (namespace, resource) => `${url}/api/v1/namespaces/${namespace}/${resource}`;
  const handler = kernel.resolve('apiHandler');
  // The load generator names objects p0, p1, … afresh in every run: each run gets a namespace of its own.
  for (const name of ['seq-1', 'seq-2', 'par-1', 'par-2']) {
    await handler.handle({
      method: 'POST',
      path: '/api/v1/namespaces',
      query: {},
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
  }

  const sequential = async (resource, body, turn) => {
    const started = performance.now();
    const result = await runLoad({ url: collection(`seq-${turn}`, resource), method: 'POST', body, ca: caPem, token: TOKEN, count: COUNT });
    return { ...result, rps: result.requests / ((performance.now() - started) / 1000) };
  };
  const concurrent = (resource, body, turn) =>
    runLoad({ url: collection(`par-${turn}`, resource), method: 'POST', body, ca: caPem, token: TOKEN, concurrency: 16, seconds: SECONDS });

  const best = (a, b) => (a.rps >= b.rps ? a : b);
  const pair = async (run) => {
    const first = [await run('configmaps', configMap, 1), await run('services', service, 1)];
    const second = [await run('services', service, 2), await run('configmaps', configMap, 2)];
    return [best(first[0], second[1]), best(first[1], second[0])];
  };
  const [cmSeqRun, svcSeqRun] = await pair(sequential);
  const [cmParRun, svcParRun] = await pair(concurrent);
  const rows = [
    [`${COUNT} ConfigMaps, one after another`, cmSeqRun],
    [`${COUNT} Services, one after another`, svcSeqRun],
    [`ConfigMaps, 16 clients, ${SECONDS}s`, cmParRun],
    [`Services, 16 clients, ${SECONDS}s`, svcParRun],
  ];
  const list = await handler.handle({
    method: 'GET',
    path: '/apis/networking.k8s.io/v1/ipaddresses',
    query: {},
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const services = await handler.handle({ method: 'GET', path: '/api/v1/services', query: {}, headers: { authorization: `Bearer ${TOKEN}` } });
  const ips = new Set(services.body.items.map((s) => s.spec.clusterIP));

  console.log('scenario                                   creates/s   p50 ms   p99 ms   errors');
  for (const [name, r] of rows)
    console.log(
      `${name.padEnd(42)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${String(r.errors).padStart(8)}`,
    );
  const [cmSeq, svcSeq, cmPar, svcPar] = rows.map(([, r]) => r.rps);
  console.log(`Services vs ConfigMaps: ${((svcSeq / cmSeq) * 100).toFixed(0)}% one after another, ${((svcPar / cmPar) * 100).toFixed(0)}% with 16 clients`);
  console.log(`${services.body.items.length} Services hold ${ips.size} distinct cluster IPs; ${list.body.items.length} IPAddress objects`);
  await kernel.stop();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
