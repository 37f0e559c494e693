#!/usr/bin/env node
// The patches of issue 17 that once stalled the API server, in @skiff/api/patch alone: a JSON patch copying a
// list into itself 22 times, 10,001 JSON patch operations, a strategic merge patch of 40,000 containers, the
// managed fields of such a write and of a merge patch of 130,000 fields, 19,000 managedFields entries sent with
// an update, a server-side apply with 40,000 conflicts. Each is printed next to JSON.stringify of the object it
// produces (the baseline: the store and the response encode it at least that often). Best of BENCH_RUNS
// (default 3) runs, in CPU milliseconds. Needs `npm run build` first.
import {
  applyApplyPatch,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  applyWithManagedFields,
  recordUpdate,
  schemaMergeKeys,
} from '@skiff/api/patch';
import { kindSchema } from '@skiff/api/schema';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const now = '2026-01-01T00:00:00Z';
const deploymentSchema = kindSchema('apps', 'v1', 'Deployment');
const configMapSchema = kindSchema('', 'v1', 'ConfigMap');
const deploymentWrite = { schema: deploymentSchema, apiVersion: 'apps/v1', subresource: '', hasStatus: true, now };
const configMapWrite = { schema: configMapSchema, apiVersion: 'v1', subresource: '', hasStatus: false, now };

function cpuMs(run, prepare) {
  const input = prepare?.();
  const started = process.cpuUsage();
  let outcome;
  try {
    run(input);
    outcome = 'ok';
  } catch (err) {
    outcome = `${err.status ?? 'error'}`;
  }
  const used = process.cpuUsage(started);
  return { ms: (used.user + used.system) / 1000, outcome };
}

/** The fastest of RUNS runs; `prepare` makes a fresh input for each, outside the time. */
function best(run, prepare) {
  let fastest = { ms: Infinity, outcome: '' };
  for (let i = 0; i < RUNS; i++) {
    const result = cpuMs(run, prepare);
    if (result.ms < fastest.ms) fastest = result;
  }
  return fastest;
}

const deployment = (containers) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'wide' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'wide' } },
    template: { metadata: { labels: { app: 'wide' } }, spec: { containers } },
  },
});
const containers = (count, image) => Array.from({ length: count }, (_, i) => ({ name: `c${i}`, image }));
const applyWrite = { ...deploymentWrite, kind: 'Deployment', group: 'apps', name: 'wide' };
const mergeForApply = (live, config) => applyApplyPatch(live, config, schemaMergeKeys(deploymentSchema, true));

const live = deployment([{ name: 'c', image: 'busybox' }]);
recordUpdate(live, undefined, 'creator', deploymentWrite);
const widePatch = { spec: { template: { spec: { containers: containers(40_000, 'busybox') } } } };
const widened = applyStrategicMergePatch(live, widePatch, schemaMergeKeys(deploymentSchema));

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'many' }, data: { a: 'x' } };
recordUpdate(configMap, undefined, 'creator', configMapWrite);
const data = Object.fromEntries(Array.from({ length: 130_000 }, (_, i) => [`k${i}`, 'v']));
const merged = applyMergePatch(configMap, { data });

const sentEntries = structuredClone(configMap);
sentEntries.data = { a: 'y' };
sentEntries.metadata.managedFields = Array.from({ length: 19_000 }, (_, i) => ({
  manager: `m${i}`,
  operation: 'Update',
  apiVersion: 'v1',
  time: now,
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:data': { [`f:k${i}`]: {} } },
}));

const applied = applyWithManagedFields(undefined, deployment(containers(40_000, 'a')), 'alice', false, applyWrite, mergeForApply);
const rival = deployment(containers(40_000, 'b'));

const cases = [
  [
    'JSON patch copying a list into itself 22 times',
    () =>
      applyJsonPatch(
        { spec: { xs: ['abc'] } },
        Array.from({ length: 22 }, () => ({ op: 'copy', from: '/spec/xs', path: '/spec/xs/-' })),
      ),
    { spec: { xs: ['abc'] } },
  ],
  [
    'JSON patch of 10,001 operations',
    () =>
      applyJsonPatch(
        { a: 1 },
        Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/a', value: 1 })),
      ),
    { a: 1 },
  ],
  ['strategic merge patch adding 40,000 containers', () => applyStrategicMergePatch(live, widePatch, schemaMergeKeys(deploymentSchema)), widened],
  ['managed fields of that write', (next) => recordUpdate(next, live, 'kubectl', deploymentWrite), widened, () => structuredClone(widened)],
  [
    'managed fields of a merge patch of 130,000 fields',
    (next) => recordUpdate(next, configMap, 'kubectl', configMapWrite),
    merged,
    () => structuredClone(merged),
  ],
  [
    'an update sending 19,000 managedFields entries',
    (next) => recordUpdate(next, configMap, 'writer', configMapWrite),
    sentEntries,
    () => structuredClone(sentEntries),
  ],
  [
    'server-side apply of 40,000 containers',
    () => applyWithManagedFields(live, deployment(containers(40_000, 'busybox')), 'probe', false, applyWrite, mergeForApply),
    applied,
  ],
  ['server-side apply with 40,000 conflicts', () => applyWithManagedFields(applied, rival, 'rival', false, applyWrite, mergeForApply), applied],
];

console.log(`best of ${RUNS} runs, CPU ms (baseline: JSON.stringify of the object)`);
for (const [name, run, object, prepare] of cases) {
  const { ms, outcome } = best(run, prepare);
  const baseline = best(() => JSON.stringify(object));
  console.log(`${name.padEnd(52)} ${ms.toFixed(1).padStart(8)} ms  ${outcome.padEnd(4)} baseline ${baseline.ms.toFixed(1).padStart(7)} ms`);
}
