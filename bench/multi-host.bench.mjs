#!/usr/bin/env node
// Nodes on other hosts (skiff join): three network-namespace "machines" on this box (scripts/hosts.mjs), a control
// plane of the local preset with one in-process node on host 0 and two nodes of the local preset (containerd, CNI bridge, nftables) joined
// with a bootstrap token. Measured, each next to its baseline from the same run:
//   - join time: `skiff join` started → "ready" (TLS bootstrap, CSR, containerd start, node Ready), per node;
//   - the API server ↔ kubelet path: pods/log of a pod on a joined node (HTTPS to the kubelet, client certificate)
//     against a GET of the same pod (API server and store only), BENCH_ROUNDS (default 200) sequential requests each;
//   - pod to pod across hosts: TCP connect + one small HTTP exchange (curl's time_total) and the throughput of a
//     BENCH_MB (default 256) MB download from busybox httpd, between pods on host 1 and host 2, against the same
//     between the two hosts' own network namespaces (no bridge, veth, routes to pod ranges or NAT).
// Root only (namespaces, containerd); needs `npm run build` first.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestImages } from '../scripts/test-images.mjs';
import { down, hostAddress, hostName, inHostCommand, up } from '../scripts/hosts.mjs';

if (process.getuid?.() !== 0) {
  console.log('multi-host bench: needs root (network namespaces, containerd); skipped');
  process.exit(0);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const MB = Number(process.env.BENCH_MB ?? 256);
const SAMPLES = 30;
const SKIFF = fileURLToPath(new URL('../core/cli/bin/skiff.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'skiff-bench-hosts-'));
let started = false;
const cleanup = async () => {
  if (started) await down({ dir }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void cleanup().then(() => process.exit(130)));

const run = (argv, input) => execFileSync(argv[0], argv.slice(1), { input, stdio: ['pipe', 'pipe', 'pipe'] }).toString();
const inHost = (index, argv) => run(inHostCommand(index, argv));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];
const ms = (value) => `${value.toFixed(2)} ms`;

try {
  const images = await buildTestImages({ out: join(dir, 'images') });
  started = true;
  // The control plane (local preset) has an in-process node of its own (node-1): the baseline of the API server ↔ kubelet path.
  const { kubeconfig } = await up({ hosts: 3, preset: 'local', controlPreset: 'local', controlNodes: 1, dir });
  const kubectl = (...args) => run(['kubectl', '--kubeconfig', kubeconfig, ...args]);
  for (const index of [0, 1, 2])
    run([process.execPath, SKIFF, 'image', 'import', images.images.busybox.archive, images.images.curl.archive, '--data-dir', join(dir, hostName(index))]);

  console.log('\njoin (skiff join → ready):');
  for (const index of [1, 2]) {
    const seconds = /^ready: node \S+ joined \S+ in ([\d.]+)s/m.exec(readFileSync(join(dir, `${hostName(index)}.log`), 'utf8'))?.[1];
    console.log(`  host-${index}: ${seconds} s`);
  }

  // ---- pods: a server on host 2, a client on host 1 ----------------------------------------------------------
  const manifest = `apiVersion: v1
kind: Pod
metadata: {name: server}
spec:
  nodeName: host-2
  containers:
  - name: httpd
    image: skiff.local/busybox:1
    imagePullPolicy: Never
    command: [sh, -c, 'dd if=/dev/zero of=/www/big bs=1M count=${MB} 2>/dev/null; echo ok > /www/small; echo ready; exec httpd -f -p 8080 -h /www']
---
apiVersion: v1
kind: Pod
metadata: {name: local}
spec:
  nodeName: node-1
  containers:
  - {name: c, image: skiff.local/busybox:1, imagePullPolicy: Never, command: [sh, -c, 'echo ready; exec sleep 3600']}
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeName: host-1
  containers:
  - {name: curl, image: skiff.local/curl:1, imagePullPolicy: Never, command: [sleep, '3600']}
`;
  run(['kubectl', '--kubeconfig', kubeconfig, 'apply', '-f', '-'], manifest);
  kubectl('wait', '--for=condition=Ready', 'pod/server', 'pod/client', 'pod/local', '--timeout=120s');
  for (let i = 0; i < 100 && !kubectl('logs', 'server').includes('ready'); i++) await new Promise((r) => setTimeout(r, 200));
  const serverIP = kubectl('get', 'pod', 'server', '-o', 'jsonpath={.status.podIP}');

  // ---- the API server ↔ kubelet path ------------------------------------------------------------------------
  const admin = readFileSync(kubeconfig, 'utf8');
  const field = (name) => new RegExp(`${name}: (\\S+)`).exec(admin)?.[1];
  const decoded = (name) => Buffer.from(field(name) ?? '', 'base64').toString();
  const token = field('token');
  const tls = token
    ? { ca: decoded('certificate-authority-data'), headers: { authorization: `Bearer ${token}` } }
    : { ca: decoded('certificate-authority-data'), cert: decoded('client-certificate-data'), key: decoded('client-key-data') };
  const get = (path) =>
    new Promise((resolve, reject) => {
      const begun = performance.now();
      const req = request({ host: hostAddress(0), port: 6443, path, ...tls }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - begun) : reject(new Error(`${path}: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end();
    });
  const timed = async (path) => {
    const times = [];
    for (let i = 0; i < ROUNDS; i++) times.push(await get(path));
    return times;
  };
  await timed('/api/v1/namespaces/default/pods/server/log');
  const logs = await timed('/api/v1/namespaces/default/pods/server/log');
  const localLogs = await timed('/api/v1/namespaces/default/pods/local/log');
  const podGet = await timed('/api/v1/namespaces/default/pods/server');
  console.log(`
API server → kubelet over HTTPS (${ROUNDS} sequential requests):`);
  console.log(`  pods/log of a pod on host-2, over HTTPS:             median ${ms(median(logs))}, p90 ${ms(p90(logs))}`);
  console.log(`  pods/log of a pod on node-1, in-process (baseline): median ${ms(median(localLogs))}, p90 ${ms(p90(localLogs))}`);
  console.log(`  GET of the pod (API server and store only):          median ${ms(median(podGet))}, p90 ${ms(p90(podGet))}`);

  // ---- pod to pod across hosts, against host to host ---------------------------------------------------------
  const curlIn = (argv) => kubectl('exec', 'client', '--', 'curl', ...argv);
  const podLatency = curlIn([
    '-s',
    '-o',
    '/dev/null',
    ...Array(SAMPLES)
      .fill(`http://${serverIP}:8080/small`)
      .flatMap((url) => ['-o', '/dev/null', '-w', '%{time_total}\\n', url]),
  ]);
  const podSpeed = Number(curlIn(['-s', '-o', '/dev/null', '-w', '%{speed_download}', `http://${serverIP}:8080/big`]));

  // The same file served by the same busybox httpd from host 2's own namespace, fetched by curl from host 1's.
  const www = join(dir, 'www');
  run(['mkdir', '-p', www]);
  run(['dd', 'if=/dev/zero', `of=${join(www, 'big')}`, 'bs=1M', `count=${MB}`, 'status=none']);
  run(['sh', '-c', `echo ok > ${join(www, 'small')}`]);
  const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((path) => {
    try {
      run([path, 'true']);
      return true;
    } catch {
      return false;
    }
  });
  const httpdArgv = inHostCommand(2, [busybox, 'httpd', '-p', '18080', '-h', www]);
  run(httpdArgv);
  try {
    const hostUrl = (file) => `http://${hostAddress(2)}:18080/${file}`;
    const hostLatency = inHost(1, [
      'curl',
      '-s',
      '-o',
      '/dev/null',
      ...Array(SAMPLES)
        .fill(hostUrl('small'))
        .flatMap((url) => ['-o', '/dev/null', '-w', '%{time_total}\\n', url]),
    ]);
    const hostSpeed = Number(inHost(1, ['curl', '-s', '-o', '/dev/null', '-w', '%{speed_download}', hostUrl('big')]));
    const seconds = (text) =>
      text
        .trim()
        .split('\n')
        .map((line) => Number(line) * 1000);
    console.log(`\npod on host-1 → pod on host-2 (${SAMPLES} small requests; a ${MB} MB download):`);
    console.log(
      `  pod to pod:    connect+request median ${ms(median(seconds(podLatency)))}, p90 ${ms(p90(seconds(podLatency)))}; ${(podSpeed / 1e6).toFixed(0)} MB/s`,
    );
    console.log(
      `  host to host:  connect+request median ${ms(median(seconds(hostLatency)))}, p90 ${ms(p90(seconds(hostLatency)))}; ${(hostSpeed / 1e6).toFixed(0)} MB/s`,
    );
    console.log(`  pod/host throughput: ${((podSpeed / hostSpeed) * 100).toFixed(0)} %`);
  } finally {
    run(['pkill', '-f', `httpd -p 18080 -h ${www}`]);
  }
} catch (err) {
  console.error(`multi-host bench: ${err.message}`);
  if (process.env.BENCH_DEBUG) console.error(execFileSync('kubectl', ['--kubeconfig', join(dir, 'admin.kubeconfig'), 'describe', 'pods']).toString());
  process.exitCode = 1;
} finally {
  await cleanup();
}
