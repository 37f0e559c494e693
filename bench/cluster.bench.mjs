#!/usr/bin/env node
// End-to-end timings of the real CLI and kubectl:
//  - `skiff up` to API ready (the ready line, and the first 200 from /readyz), fresh data dir and reused one;
//  - `kubectl create deployment --replicas=3` to 3 Running pods.
// Baseline in the same run: a Node process that starts a bare fastify HTTPS server and answers once.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'core/cli/dist/bin.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

function startProcess(args, cwd, readyPattern) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = readyPattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, ms: performance.now() - t0, match: m, out });
      }
    });
    child.stderr.on('data', (d) => (out += d));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

async function stop(child) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGINT');
  await exited;
}

function kubectl(kubeconfig, cache, ...args) {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${ms.toFixed(0)} ms`;

// Baseline: bare fastify HTTPS listening, as a process start.
const baselineDir = mkdtempSync(join(tmpdir(), 'skiff-bench-base-'));
const baselineScript = join(baselineDir, 'server.mjs');
writeFileSync(
  baselineScript,
  `import { generateKeyPairSync } from 'node:crypto';
import Fastify from '${join(root, 'node_modules/fastify/fastify.js')}';
import forge from '${join(root, 'node_modules/node-forge/lib/index.js')}';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const cert = forge.pki.createCertificate();
cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }));
cert.serialNumber = '01';
cert.validity.notBefore = new Date();
cert.validity.notAfter = new Date(Date.now() + 86400000);
cert.setSubject([{ name: 'commonName', value: 'localhost' }]);
cert.setIssuer([{ name: 'commonName', value: 'localhost' }]);
const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }));
cert.sign(key, forge.md.sha256.create());
const app = Fastify({ https: { key: forge.pki.privateKeyToPem(key), cert: forge.pki.certificateToPem(cert) } });
app.get('/readyz', async () => 'ok');
await app.listen({ port: 0, host: '127.0.0.1' });
console.log('ready: https://127.0.0.1:' + app.server.address().port);
process.on('SIGINT', () => app.close().then(() => process.exit(0)));
`,
);

const baseline = [];
for (let i = 0; i < RUNS; i++) {
  const { child, ms } = await startProcess([baselineScript], baselineDir, /^ready: /m);
  baseline.push(ms);
  await stop(child);
}

const fresh = [];
const reused = [];
const converge = [];
for (let i = 0; i < RUNS; i++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-'));
  const cache = mkdtempSync(join(tmpdir(), 'skiff-bench-cache-'));
  try {
    const args = [bin, 'up', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'];
    const first = await startProcess(args, root, /^ready: (https:\/\/\S+)/m);
    fresh.push(first.ms);
    const kubeconfig = join(dataDir, 'admin.kubeconfig');
    kubectl(kubeconfig, cache, 'get', 'nodes');
    const t0 = performance.now();
    kubectl(kubeconfig, cache, 'create', 'deployment', 'web', '--image=nginx', '--replicas=3');
    for (;;) {
      const out = kubectl(kubeconfig, cache, 'get', 'pods', '-l', 'app=web', '--no-headers');
      if ((out.match(/ Running /g) ?? []).length === 3) break;
      if (performance.now() - t0 > 30_000) throw new Error(`pods not Running: ${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    converge.push(performance.now() - t0);
    await stop(first.child);
    const second = await startProcess(args, root, /^ready: (https:\/\/\S+)/m);
    reused.push(second.ms);
    await stop(second.child);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  }
}
rmSync(baselineDir, { recursive: true, force: true });

console.log(`runs: ${RUNS} (medians)`);
console.log(`baseline: node + bare fastify HTTPS process to listening      ${fmt(median(baseline))}`);
console.log(`skiff up to API ready, fresh data dir (CA + keys generated)  ${fmt(median(fresh))}`);
console.log(`skiff up to API ready, existing data dir                     ${fmt(median(reused))}`);
console.log(`kubectl create deployment --replicas=3 to 3 Running          ${fmt(median(converge))}`);
console.log('  (includes one kubectl process per poll, ~20 ms apart)');
