#!/usr/bin/env node
// Why object literals in the sources start with `...{}` when they spread and go on (docs/contributing.md,
// "Object spread"): each way of copying an object and adding a member, in an optimized function, timed per call
// and checked for one map across calls (V8's %HaveSameMap, so the script runs itself with --allow-natives-syntax).
// The baseline is the plain copy `{ ...meta }`, measured in the same run.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (!process.execArgv.includes('--allow-natives-syntax')) {
  const result = spawnSync(process.execPath, ['--allow-natives-syntax', fileURLToPath(import.meta.url)], { stdio: 'inherit' });
  process.exit(result.status ?? 1);
}

// Natives syntax is not JavaScript a parser without the flag accepts: built at run time.
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const metas = [
  { name: 'a', namespace: 'default', uid: 'u1', labels: { app: 'x' } },
  JSON.parse('{"name":"b","namespace":"default","uid":"u2","labels":{"app":"y"}}'),
];
let turn = 0;
const meta = () => metas[turn++ & 1];

const ways = {
  '{ ...meta } (the baseline)': () => ({ ...meta() }),
  '{ ...meta, resourceVersion }': () => ({ ...meta(), resourceVersion: '7' }),
  'copy, then o.resourceVersion = …': () => {
    const copy = { ...meta() };
    copy.resourceVersion = '7';
    return copy;
  },
  '{ ...{}, ...meta, resourceVersion }': () => ({ ...{}, ...meta(), resourceVersion: '7' }),
  'Object.assign({}, meta, { resourceVersion })': () => Object.assign({}, meta(), { resourceVersion: '7' }),
};

const CALLS = 1_000_000;
const rows = [];
for (const [name, make] of Object.entries(ways)) {
  for (let i = 0; i < 200_000; i++) make(); // optimized by now
  const first = make();
  const second = make();
  const third = make();
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) make();
  const ns = ((performance.now() - started) * 1e6) / CALLS;
  // first and third come from the same source object, so a shared map is the literal's, not the source's.
  rows.push({ name, ns, oneMap: sameMap(first, third) && second !== undefined });
}
const baseline = rows[0].ns;
console.log(`Node ${process.version}, ${CALLS.toLocaleString('en')} calls each, optimized`);
console.log('literal'.padEnd(46), 'ns/call'.padStart(8), 'vs baseline'.padStart(12), 'one map'.padStart(8));
for (const row of rows) {
  console.log(row.name.padEnd(46), row.ns.toFixed(0).padStart(8), `×${(row.ns / baseline).toFixed(1)}`.padStart(12), (row.oneMap ? 'yes' : 'no').padStart(8));
}
