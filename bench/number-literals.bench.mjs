#!/usr/bin/env node
// The scan of a JSON body for number literals JSON.parse cannot tell apart (1e3, 1.0, integers past 2^53),
// and the pass that finds them at integer fields' paths, next to JSON.parse of the same text (the
// baseline: every JSON body is parsed once anyway). Typical bodies, and hostile ones of up to 3 MiB (the body limit) made
// of nothing but such literals. Prints the best of BENCH_RUNS (default 7) runs. Needs `npm run build` first.
import { NumberLiterals } from '@skiff/api/schema';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const pod = (i, cpu) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p${i}`, labels: { app: 'web', version: '1.2.3' } },
  spec: {
    containers: [{ name: 'c', image: 'nginx:1.25', ports: [{ containerPort: 80 }], resources: { limits: { cpu, memory: '1Gi' } } }],
    terminationGracePeriodSeconds: 30,
  },
});

const bodies = [
  ['one pod (kubectl create)', JSON.stringify(pod(0, '500m'))],
  ['5,000 pods, integers only', JSON.stringify({ items: Array.from({ length: 5000 }, (_, i) => pod(i, 1)) })],
  ['5,000 pods, a fraction each', JSON.stringify({ items: Array.from({ length: 5000 }, (_, i) => pod(i, 0.5)) })],
  ['an array of 786,432 fractions (0.5)', JSON.stringify({ metadata: { name: 'x' }, x: Array.from({ length: 786_432 }, () => 0.5) })],
  // Integers written as 1e0, in every shape a body can nest them: the most a body can make the scan do.
  ['hostile: an array of 786,432 × 1e0', JSON.stringify({ metadata: { name: 'x' }, x: Array.from({ length: 786_432 }, () => 1) }).replaceAll(',1', ',1e0')],
  [
    'hostile: 300,000 keys of 1e0',
    JSON.stringify({ metadata: { name: 'x' }, x: Object.fromEntries(Array.from({ length: 300_000 }, (_, i) => [`k${i}`, 1])) }).replaceAll(':1', ':1e0'),
  ],
  [
    'hostile: 60,000 objects 4 deep, 1e0 in each',
    JSON.stringify({ items: Array.from({ length: 60_000 }, () => ({ a: { b: { c: { d: 1 } } } })) }).replaceAll(':1', ':1e0'),
  ],
  ['hostile: 70,000 arrays 20 deep, 1e0 in each', `[${Array.from({ length: 70_000 }, () => `${'['.repeat(20)}1e0${']'.repeat(20)}`).join(',')}]`],
];

function best(run) {
  let fastest = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

for (const [name, text] of bodies) {
  // The most the type check asks of a body: the scan, then (an integer field holds a value some literal
  // became) one resolving pass.
  const scan = best(() => NumberLiterals.scan(text));
  const resolve = best(() => NumberLiterals.scan(text)?.resolve([{ path: ['spec', 'replicas'], value: 1 }]));
  const parse = best(() => JSON.parse(text));
  const size = text.length >= 1024 * 1024 ? `${(text.length / 1024 / 1024).toFixed(2)} MiB` : `${(text.length / 1024).toFixed(1)} KiB`;
  console.log(
    `${name.padEnd(48)} ${size.padStart(9)}  scan ${scan.toFixed(2).padStart(7)} ms  scan + resolve ${resolve.toFixed(2).padStart(7)} ms  JSON.parse ${parse.toFixed(2).padStart(7)} ms  (${(resolve / parse).toFixed(2)}×)`,
  );
}
