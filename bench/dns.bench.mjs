#!/usr/bin/env node
// Cluster DNS (@skiff/plugin-dns) against Debian's unbound, in the same run, both driven by dnsperf over UDP:
//   - the plugin runs in this process inside a real control plane (LMDB store, API server, controller manager,
//     Service allocator): BENCH_SERVICES (default 1,000) ClusterIP Services with a named port, and a tenth as
//     many headless Services with an EndpointSlice of 3 endpoints (with hostnames) each, created through the
//     API; the plugin's index fills from its informers;
//   - unbound (num-threads 1, then 2) is started on a loopback port with a generated config serving the same
//     names as local-data in a static local zone (no upstream, no root hints lookups);
//   - the query mix is a cluster's: A of Services (plus AAAA of them, as glibc asks both), SRV of named ports,
//     A of headless Services and of their pods' hostnames, and NXDOMAIN search-path misses
//     (web.default.svc.cluster.local.default.svc.cluster.local).
// Prints queries/s, the average and the p50/p99 latency (dnsperf -v, one line per answer) for each, and the
// ratio plugin/unbound. BENCH_SECONDS (default 10) per run. Needs `npm run build` first (or of plugins/dns).
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import dnsPacket from 'dns-packet';
import { RESOURCES } from '@skiff/api';
import { startControlPlane } from '@skiff/testing';
import serviceAllocator from '@skiff/plugin-service-allocator';
import dnsPlugin, { dnsServerOf } from '@skiff/plugin-dns';
import { freePort } from '../scripts/free-port.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const HEADLESS = Math.max(1, Math.floor(SERVICES / 10));
const DOMAIN = 'cluster.local';
const NS = 'default';

for (const tool of ['dnsperf', 'unbound']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    console.log(`dns bench: ${tool} is not installed (Debian package ${tool}); skipped`);
    process.exit(0);
  }
}

const work = mkdtempSync(join(tmpdir(), 'skiff-bench-dns-'));
const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

// ---- the cluster and its records -------------------------------------------------------------------------
const plane = await startControlPlane(
  [
    [serviceAllocator, { repairIntervalMs: 600_000 }],
    [dnsPlugin, { upstream: ['127.0.0.1:9'], cacheSize: 10_000 }],
  ],
  {
    config: { logLevel: 'silent' },
  },
);
const dns = dnsServerOf(plane.kernel);
const client = plane.client;
const records = []; // [name, type, value] for unbound's local-data
const started = Date.now();

async function inBatches(count, make) {
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => make(i + j)));
}
await inBatches(SERVICES, async (i) => {
  const service = await client.create(
    RESOURCES.services,
    { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: NS }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } },
    NS,
  );
  const fqdn = `svc-${i}.${NS}.svc.${DOMAIN}`;
  records.push([fqdn, 'A', service.spec.clusterIP], [`_http._tcp.${fqdn}`, 'SRV', `0 100 80 ${fqdn}.`]);
});
await inBatches(HEADLESS, async (i) => {
  const name = `hl-${i}`;
  await client.create(
    RESOURCES.services,
    { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { clusterIP: 'None', ports: [{ name: 'peer', port: 7000 }] } },
    NS,
  );
  const endpoints = [0, 1, 2].map((k) => ({
    addresses: [`10.244.${(i >> 6) & 0xff}.${((i & 63) << 2) + k + 1}`],
    hostname: `${name}-${k}`,
    conditions: { ready: true },
  }));
  await client.create(
    RESOURCES.endpointslices,
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-abc`, namespace: NS, labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'bench' } },
      addressType: 'IPv4',
      endpoints,
      ports: [{ name: 'peer', port: 7000, protocol: 'TCP' }],
    },
    NS,
  );
  const fqdn = `${name}.${NS}.svc.${DOMAIN}`;
  for (const endpoint of endpoints) {
    records.push([fqdn, 'A', endpoint.addresses[0]], [`${endpoint.hostname}.${fqdn}`, 'A', endpoint.addresses[0]]);
    records.push([`_peer._tcp.${fqdn}`, 'SRV', `0 100 7000 ${endpoint.hostname}.${fqdn}.`]);
  }
});
while (dns.services < SERVICES + HEADLESS) await new Promise((resolve) => setTimeout(resolve, 50));
console.log(`loaded ${SERVICES} ClusterIP + ${HEADLESS} headless Services through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`);

// ---- the query mix -----------------------------------------------------------------------------------------
const queries = [];
for (let i = 0; i < SERVICES; i++) {
  const fqdn = `svc-${(i * 7919) % SERVICES}.${NS}.svc.${DOMAIN}`;
  queries.push(`${fqdn} A`, `${fqdn} AAAA`, `${fqdn} A`);
  if (i % 2 === 0) queries.push(`_http._tcp.${fqdn} SRV`);
  queries.push(`${fqdn}.${NS}.svc.${DOMAIN} A`, `${fqdn}.svc.${DOMAIN} A`);
  if (i % 5 === 0) {
    const h = (i / 5) % HEADLESS;
    queries.push(`hl-${h}.${NS}.svc.${DOMAIN} A`, `hl-${h}-${i % 3}.hl-${h}.${NS}.svc.${DOMAIN} A`);
  }
}
const queryFile = join(work, 'queries.txt');
writeFileSync(queryFile, `${queries.join('\n')}\n`);

// ---- unbound with the same names ---------------------------------------------------------------------------
function unboundConfig(port, threads) {
  const lines = [
    'server:',
    '  interface: 127.0.0.1',
    `  port: ${port}`,
    '  do-daemonize: no',
    '  use-syslog: no',
    '  logfile: ""',
    '  verbosity: 0',
    '  chroot: ""',
    '  username: ""',
    `  directory: "${work}"`,
    '  pidfile: ""',
    `  num-threads: ${threads}`,
    '  access-control: 127.0.0.0/8 allow',
    '  module-config: "iterator"',
    '  do-not-query-localhost: no',
    '  so-reuseport: yes',
    `  local-zone: "${DOMAIN}." static`,
    ...records.map(([name, type, value]) => `  local-data: "${name}. 5 IN ${type} ${value}"`),
    'remote-control:',
    '  control-enable: no',
  ];
  const file = join(work, `unbound-${threads}.conf`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function startUnbound(threads) {
  const port = await freePort();
  const config = unboundConfig(port, threads);
  const check = spawnSync('unbound-checkconf', [config], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`unbound-checkconf: ${check.stdout}${check.stderr}`);
  const child = spawn('unbound', ['-d', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  // Ready once it answers.
  for (let i = 0; i < 100 && !(await answers(port)); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
        children.delete(child);
      }),
    stderr: () => stderr,
  };
}

/** Whether a DNS server on 127.0.0.1:port answers a query for the first Service within 200 ms. */
function answers(port) {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => finish(false), 200);
    const finish = (ok) => {
      clearTimeout(timer);
      socket.close();
      resolve(ok);
    };
    socket.on('message', () => finish(true));
    socket.on('error', () => finish(false));
    socket.send(dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: `svc-0.${NS}.svc.${DOMAIN}` }] }), port, '127.0.0.1');
  });
}

// ---- dnsperf -------------------------------------------------------------------------------------------------
async function perf(label, port, rate) {
  const out = join(work, `${label.replace(/\W+/g, '-')}.out`);
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(SECONDS), '-c', '4', '-q', '500', '-t', '2', '-v'];
  if (rate) args.push('-Q', String(rate));
  const child = spawn('sh', ['-c', `exec dnsperf ${args.join(' ')} > ${out} 2>&1`], { stdio: 'ignore' });
  children.add(child);
  await new Promise((resolve) => child.once('exit', resolve));
  children.delete(child);
  const latencies = [];
  let summary = '';
  const rcodes = {};
  for await (const line of createInterface({ input: createReadStream(out) })) {
    if (line.startsWith('> ')) {
      const parts = line.split(' ');
      latencies.push(Number(parts[parts.length - 1]));
      rcodes[parts[1]] = (rcodes[parts[1]] ?? 0) + 1;
    } else summary += `${line}\n`;
  }
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(summary)?.[1] ?? NaN);
  const lost = /Queries lost:\s+(\d+)/.exec(summary)?.[1] ?? '?';
  const average = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(summary)?.[1] ?? NaN);
  const result = { label, qps, average, p50: at(0.5), p99: at(0.99), lost, rcodes };
  if (rate) label = `${label} at ${rate}/s`;
  const ms = (s) => (s * 1000).toFixed(3);
  console.log(
    `${label.padEnd(26)} ${qps.toFixed(0).padStart(7)} queries/s   latency avg ${ms(average)} ms, p50 ${ms(result.p50)} ms, p99 ${ms(result.p99)} ms   lost ${lost}   ${Object.entries(
      rcodes,
    )
      .map(([code, n]) => `${code} ${((100 * n) / latencies.length).toFixed(0)}%`)
      .join(', ')}`,
  );
  return result;
}

/**
 * The API server's latency while DNS is under load (same process, same event loop): GETs of one Service
 * through the loopback client, one after another, until `until` resolves.
 */
async function probeApi(until) {
  const times = [];
  let done = false;
  until.then(() => (done = true));
  while (!done) {
    const start = performance.now();
    await client.get(RESOURCES.services, 'svc-0', NS);
    times.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  times.sort((a, b) => a - b);
  return { count: times.length, p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)], max: times[times.length - 1] };
}

const RATE = Number(process.env.BENCH_RATE ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
console.log(
  `${queries.length} queries in the mix; dnsperf: 4 sockets, 500 outstanding, ${SECONDS} s per run, 2 cores shared with dnsperf; ` +
    `${ROUNDS} rounds taking turns, the best of each shown last`,
);
const unbound1 = await startUnbound(1);
const unbound2 = await startUnbound(2);
try {
  const best = { plugin: undefined, one: undefined, two: undefined, pluginAtRate: undefined, oneAtRate: undefined, api: undefined };
  const better = (key, result, by = (r) => r.qps) => (best[key] = !best[key] || by(result) > by(best[key]) ? result : best[key]);
  const idle = await probeApi(new Promise((resolve) => setTimeout(resolve, 1000)));
  for (let round = 0; round < ROUNDS; round++) {
    const loaded = perf('@skiff/plugin-dns', dns.port);
    const api = await probeApi(loaded);
    better('plugin', await loaded);
    better('api', api, (r) => -r.p99);
    better('one', await perf('unbound num-threads 1', unbound1.port));
    better('two', await perf('unbound num-threads 2', unbound2.port));
    better('pluginAtRate', await perf('@skiff/plugin-dns', dns.port, RATE), (r) => -r.p99);
    better('oneAtRate', await perf('unbound num-threads 1', unbound1.port, RATE), (r) => -r.p99);
  }
  const ms = (x) => x.toFixed(2);
  const { plugin, one, two, pluginAtRate, oneAtRate, api } = best;
  console.log('\nbest of the rounds:');
  for (const [label, result] of [
    ['@skiff/plugin-dns', plugin],
    ['unbound num-threads 1', one],
    ['unbound num-threads 2', two],
  ])
    console.log(`  ${label.padEnd(24)} ${result.qps.toFixed(0).padStart(7)} queries/s, p99 ${ms(result.p99 * 1000)} ms (at saturation: queueing)`);
  console.log(
    `  at ${RATE} queries/s: p50/p99 plugin ${ms(pluginAtRate.p50 * 1000)}/${ms(pluginAtRate.p99 * 1000)} ms, unbound ${ms(oneAtRate.p50 * 1000)}/${ms(oneAtRate.p99 * 1000)} ms`,
  );
  console.log(
    `  API GET (loopback) idle p50/p99 ${ms(idle.p50)}/${ms(idle.p99)} ms; while the plugin answered at full load ${ms(api.p50)}/${ms(api.p99)} ms, max ${ms(api.max)} ms`,
  );
  console.log(
    `  plugin / unbound (1 thread): ${(plugin.qps / one.qps).toFixed(2)} of the queries/s (goal >= 0.50); plugin / unbound (2 threads): ${(plugin.qps / two.qps).toFixed(2)}`,
  );
} finally {
  await unbound1.stop();
  await unbound2.stop();

  await plane.stop();
}
