#!/usr/bin/env node
// The nftables service proxy (@skiff/plugin-proxy-nftables) at scale, in network namespaces this script makes
// (the host's ruleset is never touched): a real control plane in this process holds BENCH_SERVICES (default
// 1,000) ClusterIP Services with an EndpointSlice of BENCH_ENDPOINTS (default 10) endpoints each, created through
// the API; the proxy's rules go into a "node" namespace. Measured, in one run:
//   - the full sync: create() to synced(), and the sync itself (script built and `nft -f` applied);
//   - one changed EndpointSlice (an endpoint replaced), BENCH_CHANGES (default 50) times: from the informer event
//     to nft done (as the proxy logs it), and from the API write to nft done; as a baseline, the same kind of
//     transaction applied by a new `nft -f` process each time (what the proxy's long-lived `nft -i` saves);
//   - the added latency of the ClusterIP: BENCH_REQUESTS (default 3,000) small TCP requests (connect, read a
//     line, close) from a client namespace to a server namespace, alternating between the pod IP directly (the
//     baseline) and a ClusterIP in front of it, p50/p99 of both.
// Needs root (namespaces, nftables) and `npm run build` first (or of core/testing and plugins/proxy-nftables).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { RESOURCES } from '@skiff/api';
import { Kernel } from '@skiff/kernel';
import { startControlPlane } from '@skiff/testing';
import proxyPlugin from '@skiff/plugin-proxy-nftables';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 1000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 50);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const TABLE = 'skiff-proxy-bench';
const PORT = 8080;
const SERVER_IP = '10.244.1.11';
const PROBE_IP = '10.96.200.1';

if (process.getuid?.() !== 0) {
  console.log('proxy.bench.mjs needs root (network namespaces and nftables); skipped');
  process.exit(0);
}

const prefix = `skpb${randomBytes(2).toString('hex')}`;
const ns = { node: `${prefix}-node`, client: `${prefix}-client`, server: `${prefix}-server` };
const made = [];
const children = [];
const sh = (...args) => execFileSync(args[0], args.slice(1), { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const inNs = (name, ...args) => sh('ip', 'netns', 'exec', name, ...args);

function network() {
  for (const name of Object.values(ns)) {
    sh('ip', 'netns', 'add', name);
    made.push(name);
    inNs(name, 'ip', 'link', 'set', 'lo', 'up');
  }
  inNs(ns.node, 'ip', 'link', 'add', 'br0', 'type', 'bridge');
  inNs(ns.node, 'ip', 'addr', 'add', '10.244.1.1/24', 'dev', 'br0');
  inNs(ns.node, 'ip', 'link', 'set', 'br0', 'up');
  inNs(ns.node, 'ip', 'link', 'add', 've1', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns.server);
  inNs(ns.node, 'ip', 'link', 'set', 've1', 'master', 'br0', 'up');
  inNs(ns.server, 'ip', 'addr', 'add', `${SERVER_IP}/24`, 'dev', 'eth0');
  inNs(ns.server, 'ip', 'link', 'set', 'eth0', 'up');
  inNs(ns.server, 'ip', 'route', 'add', 'default', 'via', '10.244.1.1');
  inNs(ns.node, 'ip', 'link', 'add', 'vc', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns.client);
  inNs(ns.node, 'ip', 'addr', 'add', '192.168.77.1/24', 'dev', 'vc');
  inNs(ns.node, 'ip', 'link', 'set', 'vc', 'up');
  inNs(ns.client, 'ip', 'addr', 'add', '192.168.77.2/24', 'dev', 'eth0');
  inNs(ns.client, 'ip', 'link', 'set', 'eth0', 'up');
  inNs(ns.client, 'ip', 'route', 'add', 'default', 'via', '192.168.77.1');
  // A node has a default route (here to a gateway nobody answers for).
  inNs(ns.node, 'ip', 'link', 'add', 'up0', 'type', 'veth', 'peer', 'name', 'up1');
  inNs(ns.node, 'ip', 'addr', 'add', '192.168.99.1/24', 'dev', 'up0');
  inNs(ns.node, 'ip', 'link', 'set', 'up0', 'up');
  inNs(ns.node, 'ip', 'link', 'set', 'up1', 'up');
  inNs(ns.node, 'ip', 'route', 'add', 'default', 'via', '192.168.99.2');
}

const SERVER = `require('net').createServer((s) => { s.on('error', () => {}); s.end('server\\n'); }).listen(${PORT}, '0.0.0.0', () => console.log('ready'));`;

// Alternates the targets request by request, so drift over the run hits both alike; prints each one's latencies.
const CLIENT = `
const net = require('net');
const { targets, count } = JSON.parse(process.argv[1]);
const once = (target) => new Promise((resolve, reject) => {
  const [host, port] = target.split(':');
  const started = process.hrtime.bigint();
  const s = net.connect({ host, port: Number(port) });
  s.on('data', () => {});
  s.on('end', () => { s.destroy(); resolve(Number(process.hrtime.bigint() - started) / 1e6); });
  s.on('error', reject);
});
(async () => {
  const out = Object.fromEntries(targets.map((t) => [t, []]));
  for (let i = 0; i < 200; i++) await once(targets[i % targets.length]);
  for (let i = 0; i < count * targets.length; i++) { const t = targets[i % targets.length]; out[t].push(await once(t)); }
  console.log(JSON.stringify(out));
})();
`;

function startServer() {
  const child = spawn('ip', ['netns', 'exec', ns.server, process.execPath, '-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve) => child.stdout.once('data', resolve));
}

function runClient(targets, count) {
  return new Promise((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns.client, process.execPath, '-e', CLIENT, JSON.stringify({ targets, count })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited with ${code}`))));
  });
}

/** A logger that keeps the proxy's sync records and lets the bench wait for the next one. */
function syncLogger() {
  const syncs = [];
  const waiters = [];
  const log = (level) => (fields, message) => {
    if (level === 'error' || level === 'warn') console.error(level, message, fields);
    if (message !== 'service rules synced') return;
    const record = { ...fields, at: performance.now() };
    syncs.push(record);
    for (const waiter of waiters.splice(0)) waiter(record);
  };
  const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return { logger, syncs, next: () => new Promise((resolve) => waiters.push(resolve)) };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const ms = (value) => `${value.toFixed(2)} ms`;

async function pool(count, concurrency, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

const endpointIP = (service, endpoint) => `10.${245 + Math.floor(service / 250)}.${service % 250}.${endpoint + 1}`;
const serviceIP = (service) => `10.96.${Math.floor(service / 250)}.${(service % 250) + 1}`;
const slice = (name, ips, version) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: `${name}-x`, namespace: 'default', labels: { 'kubernetes.io/service-name': name }, ...(version ? { resourceVersion: version } : {}) },
  addressType: 'IPv4',
  ports: [{ name: 'http', protocol: 'TCP', port: PORT }],
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1' })),
});
const service = (name, clusterIP) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: PORT }] },
});

let plane;
let proxy;
try {
  network();
  await startServer();
  plane = await startControlPlane([], { enabled: [], config: { logLevel: 'silent' } });
  const { client } = plane;
  let started = performance.now();
  await pool(SERVICES, 32, async (i) => {
    await client.create(RESOURCES.services, service(`s${i}`, serviceIP(i)));
    await client.create(
      RESOURCES.endpointslices,
      slice(
        `s${i}`,
        Array.from({ length: ENDPOINTS }, (_, e) => endpointIP(i, e)),
      ),
    );
  });
  await client.create(RESOURCES.services, service('probe', PROBE_IP));
  await client.create(RESOURCES.endpointslices, slice('probe', [SERVER_IP]));
  console.log(
    `${SERVICES} Services × ${ENDPOINTS} endpoints (+1 probe Service) created through the API in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const factories = [];
  new Kernel({ config: { logLevel: 'silent' } })
    .use(proxyPlugin, { netns: ns.node, table: TABLE, serviceCIDRs: ['10.96.0.0/16'], fullSyncSeconds: 0 })
    .hooks.serviceProxies.call({ register: (f) => factories.push(f), get: () => undefined, list: () => factories });
  const { logger, syncs, next } = syncLogger();
  started = performance.now();
  proxy = await factories[0].create({ nodeName: 'node-1', index: 0, dataDir: '/nonexistent', logger, nodeIPs: ['192.168.77.1'], client });
  await proxy.synced();
  const createToSynced = performance.now() - started;
  const fullSync = syncs.find((s) => s.kind === 'fresh');
  const chains = Number(inNs(ns.node, 'sh', '-c', `nft list chains ip | grep -c 'chain '`).trim());
  console.log(
    `\nfull sync (${fullSync.services} Services, ${chains} chains): create() → synced() ${ms(createToSynced)} (informer lists included); the sync itself ${ms(fullSync.syncMs)}   goal ≤ 1000 ms`,
  );

  const sinceEvent = [];
  const sinceWrite = [];
  const nftOnly = [];
  for (let round = 0; round < CHANGES; round++) {
    const target = `s${round % SERVICES}`;
    const current = await client.get(RESOURCES.endpointslices, `${target}-x`, 'default');
    const ips = current.endpoints.map((e) => e.addresses[0]);
    ips[0] = `10.250.${Math.floor(round / 250)}.${(round % 250) + 1}`;
    const synced = next();
    const written = performance.now();
    await client.update(RESOURCES.endpointslices, slice(target, ips, current.metadata.resourceVersion));
    const record = await synced;
    sinceEvent.push(record.sinceChangeMs);
    nftOnly.push(record.nftMs);
    sinceWrite.push(record.at - written);
    // Spaced like independent changes, not a burst the proxy would coalesce.
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  console.log(
    `one changed EndpointSlice (${CHANGES} times): informer event → nft done p50 ${ms(quantile(sinceEvent, 0.5))} p99 ${ms(quantile(sinceEvent, 0.99))} max ${ms(Math.max(...sinceEvent))};` +
      ` API write → nft done p50 ${ms(quantile(sinceWrite, 0.5))} p99 ${ms(quantile(sinceWrite, 0.99))};` +
      ` of it in nft p50 ${ms(quantile(nftOnly, 0.5))} p99 ${ms(quantile(nftOnly, 0.99))}   goal ≤ 50 ms`,
  );

  // Baseline: the same kind of transaction (one Service's chain flushed and refilled) through a new nft process each time.
  const oneShot = [];
  for (let round = 0; round < CHANGES; round++) {
    const index = round % SERVICES;
    const chain = `svc-default/s${index}/tcp/http`;
    const ips = Array.from({ length: ENDPOINTS }, (_, e) => endpointIP(index, e));
    ips[0] = `10.251.${Math.floor(round / 250)}.${(round % 250) + 1}`;
    const spread = ips.map((ip, i) => `${i} : ${ip} . ${PORT}`).join(', ');
    const script = [
      `flush chain ip ${TABLE} ${chain}`,
      `add rule ip ${TABLE} ${chain} ip daddr ${serviceIP(index)} ip saddr != 10.244.0.0/16 jump mark-for-masquerade`,
      `add rule ip ${TABLE} ${chain} meta l4proto tcp dnat ip addr . port to numgen random mod ${ips.length} map { ${spread} }`,
    ].join('\n');
    const begun = performance.now();
    const result = spawnSync('nsenter', [`--net=/run/netns/${ns.node}`, 'nft', '-f', '-'], { input: `${script}\n` });
    if (result.status !== 0) throw new Error(`nft -f failed: ${result.stderr}`);
    oneShot.push(performance.now() - begun);
  }
  console.log(
    `  baseline, the same kind of transaction through a new \`nft -f\` each time: p50 ${ms(quantile(oneShot, 0.5))} p99 ${ms(quantile(oneShot, 0.99))}`,
  );

  const latencies = await runClient([`${SERVER_IP}:${PORT}`, `${PROBE_IP}:80`], REQUESTS);
  const direct = latencies[`${SERVER_IP}:${PORT}`];
  const viaService = latencies[`${PROBE_IP}:80`];
  console.log(`\nTCP request (connect, read a line, close), ${REQUESTS} each, alternating, client namespace → server namespace through the node:`);
  console.log(`  pod IP directly (baseline)  p50 ${ms(quantile(direct, 0.5))}  p99 ${ms(quantile(direct, 0.99))}`);
  console.log(`  through the ClusterIP       p50 ${ms(quantile(viaService, 0.5))}  p99 ${ms(quantile(viaService, 0.99))}`);
  console.log(
    `  added by the proxy          p50 ${ms(quantile(viaService, 0.5) - quantile(direct, 0.5))}  p99 ${ms(quantile(viaService, 0.99) - quantile(direct, 0.99))}`,
  );
} finally {
  await proxy?.close().catch((err) => console.error('closing the proxy failed:', err.message));
  await plane?.stop();
  for (const child of children) child.kill('SIGKILL');
  for (const name of made.reverse()) {
    try {
      sh('ip', 'netns', 'delete', name);
    } catch {
      // already gone
    }
  }
}
