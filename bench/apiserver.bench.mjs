#!/usr/bin/env node
// Requests per second of the Skiff API server over HTTPS keep-alive, next to a bare fastify HTTPS server
// answering the same pod as a fixed JSON object in the same run (the baseline):
//   - GET of one pod (authentication, authorization, LMDB read, JSON out);
//   - create pod (decode, type check, defaults, admission, validation, LMDB write, watch fan-out);
//   - create pod and create lease with JSON and with protobuf bodies (as kubectl 1.32+ send them), side by side.
// The load runs in a worker thread so client and server do not share an event loop. Bounded in time:
// BENCH_SECONDS (default 3) per scenario. Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchApiServer } from './bench-cluster.mjs';
import { load as runLoad } from './https-load.mjs';
import fastify from 'fastify';
import { ensurePki } from '@skiff/apiserver';
import { encodeProtobufObject } from '@skiff/api/protobuf';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

const pod = (name) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'bench' } },
  spec: { containers: [{ name: 'web', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
});

const lease = (name) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name },
  spec: { holderIdentity: 'bench', leaseDurationSeconds: 40 },
});

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-apiserver-'));
try {
  const { url, caPem, token, call, stop } = await startBenchApiServer({ dataDir });
  const load = (options) => runLoad({ token, concurrency: CONCURRENCY, seconds: SECONDS, ...options });
  const created = await call('POST', '/api/v1/namespaces/default/pods', pod('bench-get'));
  if (created.status !== 201) throw new Error(`could not create the pod to read: ${JSON.stringify(created.body)}`);

  // Baseline: fastify over the same TLS material, answering the same pod (same bytes) as a fixed object.
  const pki = ensurePki(join(dataDir, 'baseline'), '127.0.0.1');
  const fixed = created.body;
  const baseline = fastify({ https: { key: pki.keyPem, cert: pki.certPem }, logger: false });
  baseline.get('/pod', async () => fixed);
  await baseline.listen({ host: '127.0.0.1', port: 0 });
  const baselineUrl = `https://127.0.0.1:${baseline.server.address().port}/pod`;

  const rows = [];
  const measure = async (name, options) => rows.push({ name, ...(await load(options)) });
  await measure('baseline: fastify GET fixed JSON', { url: baselineUrl, method: 'GET', ca: pki.caPem });
  await measure('skiff: GET pod', { url: `${url}/api/v1/namespaces/default/pods/bench-get`, method: 'GET', ca: caPem });
  await measure('skiff: create pod', { url: `${url}/api/v1/namespaces/default/pods`, method: 'POST', ca: caPem, body: JSON.stringify(pod('NAME')) });
  // The same creates with protobuf bodies, as kubectl 1.32+ send them (encoded up front, one name each).
  const protobufBodies = (make) => Array.from({ length: 40_000 }, (_, i) => encodeProtobufObject(make(`b${i.toString(36)}`)));
  const PROTOBUF = 'application/vnd.kubernetes.protobuf';
  await measure('skiff: create pod (protobuf)', {
    url: `${url}/api/v1/namespaces/default/pods`,
    method: 'POST',
    ca: caPem,
    bodies: protobufBodies(pod),
    contentType: PROTOBUF,
  });
  await measure('skiff: create lease', {
    url: `${url}/apis/coordination.k8s.io/v1/namespaces/default/leases`,
    method: 'POST',
    ca: caPem,
    body: JSON.stringify(lease('NAME')),
  });
  await measure('skiff: create lease (protobuf)', {
    url: `${url}/apis/coordination.k8s.io/v1/namespaces/default/leases`,
    method: 'POST',
    ca: caPem,
    bodies: protobufBodies(lease),
    contentType: PROTOBUF,
  });

  console.log(`HTTPS keep-alive, ${CONCURRENCY} concurrent requests, ${SECONDS} s per scenario (after 0.5 s warm-up)`);
  console.log('scenario'.padEnd(36), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'errors'.padStart(7));
  for (const row of rows)
    console.log(
      row.name.padEnd(36),
      row.rps.toFixed(0).padStart(9),
      row.p50.toFixed(2).padStart(8),
      row.p99.toFixed(2).padStart(8),
      String(row.errors).padStart(7),
    );
  const base = rows[0].rps;
  const rps = (name) => rows.find((row) => row.name === name).rps;
  console.log(`skiff GET pod at ${((rows[1].rps / base) * 100).toFixed(0)}% of the baseline; create at ${((rows[2].rps / base) * 100).toFixed(0)}%`);
  console.log(
    `protobuf bodies against JSON: pod creates ${((rps('skiff: create pod (protobuf)') / rps('skiff: create pod')) * 100).toFixed(0)}%, lease creates ${((rps('skiff: create lease (protobuf)') / rps('skiff: create lease')) * 100).toFixed(0)}%`,
  );

  await stop();
  await baseline.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
