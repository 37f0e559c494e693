#!/usr/bin/env node
// Custom resources against built-in kinds, in one run over HTTPS keep-alive: creates/s of a custom resource whose
// CRD has a structural schema with defaults, bounds, a pattern and a CEL rule, next to ConfigMap creates (the
// built-in baseline, the goal is ≥ 90% of it), and GETs of each. BENCH_SECONDS (default 3) per scenario.
// Needs `npm run build` first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchApiServer } from './bench-cluster.mjs';
import { load as runLoad } from './https-load.mjs';
import apiExtensionsPlugin from '@skiff/plugin-apiextensions';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.bench.skiff.dev' },
  spec: {
    group: 'bench.skiff.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size', 'colour'],
                'x-kubernetes-validations': [{ rule: 'self.size <= self.maxSize', message: 'size above maxSize' }],
                properties: {
                  size: { type: 'integer', minimum: 1 },
                  maxSize: { type: 'integer', default: 100 },
                  colour: { type: 'string', enum: ['red', 'green', 'blue'] },
                  label: { type: 'string', pattern: '^[a-z]+$', default: 'plain' },
                  tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
                },
              },
              status: { type: 'object', properties: { ready: { type: 'boolean' } } },
            },
          },
        },
      },
    ],
  },
};

const widget = {
  apiVersion: 'bench.skiff.dev/v1',
  kind: 'Widget',
  metadata: { name: 'NAME', labels: { app: 'bench' } },
  spec: { size: 3, colour: 'red', tags: ['a', 'b'] },
};
const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'NAME', labels: { app: 'bench' } },
  data: { size: '3', colour: 'red', tags: 'a,b' },
};

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-bench-crd-'));
try {
  const { url, caPem, token, call, stop } = await startBenchApiServer({ plugins: [apiExtensionsPlugin], dataDir });
  const load = (options) => runLoad({ token, concurrency: CONCURRENCY, seconds: SECONDS, ...options });
  const created = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', CRD);
  if (created.status !== 201) throw new Error(`could not create the CRD: ${JSON.stringify(created.body)}`);
  const widgets = '/apis/bench.skiff.dev/v1/namespaces/default/widgets';
  for (let i = 0; (await call('GET', widgets)).status !== 200; i++) {
    if (i > 200) throw new Error('the CRD was not served within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const [path, body] of [
    [widgets, { ...widget, metadata: { name: 'bench-get' } }],
    ['/api/v1/namespaces/default/configmaps', { ...configMap, metadata: { name: 'bench-get' } }],
  ]) {
    const answer = await call('POST', path, body);
    if (answer.status !== 201) throw new Error(`could not create ${path}/bench-get: ${JSON.stringify(answer.body)}`);
  }

  const rows = [];
  const measure = async (name, options) => rows.push({ name, ...(await load({ ca: caPem, ...options })) });
  await measure('baseline: create configmap', { url: `${url}/api/v1/namespaces/default/configmaps`, method: 'POST', body: JSON.stringify(configMap) });
  await measure('create widget (custom resource)', { url: `${url}${widgets}`, method: 'POST', body: JSON.stringify(widget) });
  await measure('baseline: GET configmap', { url: `${url}/api/v1/namespaces/default/configmaps/bench-get`, method: 'GET' });
  await measure('GET widget (custom resource)', { url: `${url}${widgets}/bench-get`, method: 'GET' });

  console.log(`custom resources vs ConfigMaps over HTTPS keep-alive, ${CONCURRENCY} concurrent, ${SECONDS} s each`);
  console.table(rows.map((r) => ({ scenario: r.name, 'req/s': Math.round(r.rps), 'p50 ms': r.p50.toFixed(2), 'p99 ms': r.p99.toFixed(2), errors: r.errors })));
  const ratio = (a, b) => `${((rows[a].rps / rows[b].rps) * 100).toFixed(0)}%`;
  console.log(`custom resource creates: ${ratio(1, 0)} of ConfigMap creates (goal ≥ 90%); GETs: ${ratio(3, 2)}`);
  if (rows.some((r) => r.errors > 0 || r.requests === 0)) process.exitCode = 1;
  await stop();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
