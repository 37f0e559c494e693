#!/usr/bin/env node
// Throughput of the CRD structural-schema engine (@skiff/plugin-apiextensions, src/schema): prune + default +
// validate of a typical custom resource (20 fields, 2 CEL rules, one of them a comprehension), next to
// JSON.parse of the same object — the work every request does anyway — measured in the same run; then the
// CEL rules that once stalled the server, under the runtime cost limits.
// Each iteration decodes the JSON text (the engine mutates the object), so the engine's own cost is the
// difference of the two. Rounds of BENCH_BUDGET_MS (default 400 ms), best of ROUNDS counts.
// Uses the package's built dist when it exports compileSchema, else bundles src/schema with esbuild.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUDGET_MS = Number(process.env.BENCH_BUDGET_MS ?? 400);
const ROUNDS = 3;
const here = dirname(fileURLToPath(import.meta.url));

async function loadEngine() {
  try {
    const pkg = await import('@skiff/plugin-apiextensions');
    if (typeof pkg.compileSchema === 'function') return { engine: pkg, cleanup: () => {} };
  } catch {
    // not built yet: bundle the source below
  }
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'crd-schema-bench-'));
  const outfile = join(dir, 'schema.mjs');
  await build({
    entryPoints: [join(here, '../plugins/apiextensions/src/schema/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['source'],
    outfile,
    logLevel: 'error',
  });
  return { engine: await import(pathToFileURL(outfile).href), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['image', 'replicas'],
      'x-kubernetes-validations': [
        { rule: 'self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas', message: 'replicas must be within [minReplicas, maxReplicas]' },
        { rule: "self.ports.all(p, p.port > 0 && p.port < 65536 && p.name.matches('^[a-z]+$'))" },
      ],
      properties: {
        image: { type: 'string', minLength: 1 },
        replicas: { type: 'integer', minimum: 0, default: 1 },
        minReplicas: { type: 'integer', minimum: 0, default: 1 },
        maxReplicas: { type: 'integer', maximum: 100, default: 10 },
        paused: { type: 'boolean', default: false },
        mode: { type: 'string', enum: ['Fast', 'Safe'], default: 'Safe' },
        owner: { type: 'string', format: 'email' },
        host: { type: 'string', format: 'hostname' },
        schedule: { type: 'string', pattern: '^[0-9*/ ,-]+$' },
        timeout: { type: 'string', format: 'duration' },
        ratio: { type: 'number', minimum: 0, maximum: 1 },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name', 'port'],
            properties: { name: { type: 'string' }, port: { type: 'integer', format: 'int32' }, protocol: { type: 'string', default: 'TCP' } },
          },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        resources: { type: 'object', properties: { cpu: { 'x-kubernetes-int-or-string': true }, memory: { 'x-kubernetes-int-or-string': true } } },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' }, observedGeneration: { type: 'integer' } } },
  },
};

const resource = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'bench', namespace: 'default', labels: { app: 'bench' } },
  spec: {
    image: 'nginx:1.25',
    replicas: 3,
    minReplicas: 2,
    maxReplicas: 5,
    owner: 'team@example.com',
    host: 'bench.example.com',
    schedule: '*/5 * * * *',
    timeout: '30s',
    ratio: 0.25,
    labels: { tier: 'web', env: 'prod' },
    ports: [
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ],
    tags: ['a', 'b', 'c'],
    resources: { cpu: '500m', memory: 1048576 },
    config: { anything: { goes: true } },
    unknownField: 'pruned',
  },
};
const text = JSON.stringify(resource);

function measure(fn) {
  const end = performance.now() + BUDGET_MS;
  let n = 0;
  const start = performance.now();
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  return n / ((performance.now() - start) / 1000);
}

// The CEL rules issue 17's hostile user stalled the server with, on a stored CRD (compileSchema alone: no
// estimate refuses them, only the runtime limits hold), and how long the runtime budget takes to spend.
function hostileRules(engine) {
  const spec = (properties, rules) => ({
    type: 'object',
    properties: { spec: { type: 'object', properties, 'x-kubernetes-validations': rules.map((rule) => ({ rule })) } },
  });
  const ints = { type: 'array', items: { type: 'integer' } };
  const nested = 'self.xs.all(a, self.xs.all(b, self.xs.all(c, self.xs.all(d, a + b + c + d >= 0))))';
  const cases = [
    ['eight chained replace() on 200 KB', spec({ s: { type: 'string' } }, [`self.s${".replace('a','aa')".repeat(8)} != ''`]), { s: 'a'.repeat(200_000) }],
    ["replace('-','_') on 600 KB", spec({ s: { type: 'string' } }, ["self.s.replace('-','_') != 'x'"]), { s: '-'.repeat(600_000) }],
    ['four nested all() over 60 items', spec({ xs: ints }, [nested]), { xs: Array.from({ length: 60 }, (_, i) => i) }],
    ['the whole 10M budget, in loops', spec({ xs: ints }, [nested]), { xs: Array.from({ length: 60 }, (_, i) => i) }, { celCallLimit: 10_000_000 }],
    [
      'the whole 10M budget, in lowerAscii()',
      spec({ s: { type: 'string' }, xs: ints }, ["self.xs.all(x, self.s.lowerAscii() != '')"]),
      { s: 'A'.repeat(100_000), xs: Array.from({ length: 2_000 }, (_, i) => i) },
      { celCallLimit: 10_000_000 },
    ],
  ];
  console.log('CEL rules on a stored CRD (runtime limits only):');
  for (const [name, schema, value, options] of cases) {
    const compiled = engine.compileSchema(schema, options);
    let best = Number.POSITIVE_INFINITY;
    let causes = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      causes = compiled.validate({ spec: value });
      best = Math.min(best, performance.now() - started);
    }
    const verdict = causes.length === 0 ? 'accepted' : causes[0].message.includes('running out of cost budget') ? 'budget spent' : 'call limit';
    console.log(`  ${name.padEnd(40)} ${verdict.padEnd(12)} ${best.toFixed(0).padStart(6)} ms`);
  }
}

const { engine, cleanup } = await loadEngine();
try {
  const compiled = engine.compileSchema(schema);
  const check = JSON.parse(text);
  const unknown = compiled.prune(check);
  compiled.applyDefaults(check);
  const causes = compiled.validate(check);
  if (unknown.join() !== 'spec.unknownField' || causes.length !== 0) throw new Error(`unexpected result: ${JSON.stringify({ unknown, causes })}`);

  let parse = 0;
  let full = 0;
  for (let round = 0; round < ROUNDS; round++) {
    parse = Math.max(
      parse,
      measure(() => JSON.parse(text)),
    );
    full = Math.max(
      full,
      measure(() => {
        const object = JSON.parse(text);
        compiled.prune(object);
        compiled.applyDefaults(object);
        compiled.validate(object);
      }),
    );
  }
  const engineOnly = 1 / (1 / full - 1 / parse);
  const fmt = (n) => Math.round(n).toLocaleString('en-US').padStart(10);
  console.log(`typical CR: ${text.length} bytes of JSON, 20 spec fields, 2 CEL rules`);
  console.log(`JSON.parse (baseline)                  ${fmt(parse)} objects/s`);
  console.log(`JSON.parse + prune + default + validate ${fmt(full)} objects/s`);
  console.log(`prune + default + validate alone       ${fmt(engineOnly)} objects/s (${(1e6 / engineOnly).toFixed(1)} µs each)`);

  hostileRules(engine);
} finally {
  cleanup();
}
