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
import { startBenchApiServer } from './bench-cluster.mjs';
import { load as runLoad } from './https-load.mjs';
import serviceAllocator from '@skiff/plugin-service-allocator';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const COUNT = Number(process.env.BENCH_COUNT ?? 1000);

const configMap = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'NAME', labels: { app: 'bench' } }, data: { mode: 'fast' } });
const service = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'NAME', labels: { app: 'bench' } },
  spec: { selector: { app: 'bench' }, ports: [{ port: 80, targetPort: 8080 }] },
});

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-services-'));
try {
  const { url, caPem, token, call, stop } = await startBenchApiServer({ plugins: [[serviceAllocator, { repairIntervalMs: 600_000 }]], dataDir });
  const collection = (namespace, resource) => `${url}/api/v1/namespaces/${namespace}/${resource}`;
  // The load generator names objects p0, p1, … afresh in every run: each run gets a namespace of its own.
  for (const name of ['seq-1', 'seq-2', 'par-1', 'par-2'])
    await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, { 'content-type': 'application/json' });

  const sequential = async (resource, body, turn) => {
    const started = performance.now();
    const result = await runLoad({ url: collection(`seq-${turn}`, resource), method: 'POST', body, ca: caPem, token, count: COUNT });
    return { ...result, rps: result.requests / ((performance.now() - started) / 1000) };
  };
  const concurrent = (resource, body, turn) =>
    runLoad({ url: collection(`par-${turn}`, resource), method: 'POST', body, ca: caPem, token, concurrency: 16, seconds: SECONDS });

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
  const list = await call('GET', '/apis/networking.k8s.io/v1/ipaddresses');
  const services = await call('GET', '/api/v1/services');
  const ips = new Set(services.body.items.map((s) => s.spec.clusterIP));

  console.log('scenario                                   creates/s   p50 ms   p99 ms   errors');
  for (const [name, r] of rows)
    console.log(
      `${name.padEnd(42)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)} ${String(r.errors).padStart(8)}`,
    );
  const [cmSeq, svcSeq, cmPar, svcPar] = rows.map(([, r]) => r.rps);
  console.log(`Services vs ConfigMaps: ${((svcSeq / cmSeq) * 100).toFixed(0)}% one after another, ${((svcPar / cmPar) * 100).toFixed(0)}% with 16 clients`);
  console.log(`${services.body.items.length} Services hold ${ips.size} distinct cluster IPs; ${list.body.items.length} IPAddress objects`);
  await stop();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
