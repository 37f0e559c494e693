#!/usr/bin/env node
// The benchmarks' API server (bench-cluster.mjs) as a process of its own, so a benchmark can load it without
// sharing an event loop with it and can read its memory from /proc:
//   node bench/serve-bench.mjs <dataDir> [workers[:on-demand]]      (or BENCH_DATA_DIR and BENCH_WORKERS)
// Prints one JSON line {"url","caPem","token"} on stdout once it serves; SIGTERM stops it cleanly. The caller
// makes and removes dataDir. Needs `npm run build` first.
import { startBenchApiServer } from './bench-cluster.mjs';

const dataDir = process.argv[2] ?? process.env.BENCH_DATA_DIR;
const [count, mode] = String(process.argv[3] ?? process.env.BENCH_WORKERS ?? 1).split(':');
const workers = Number(count);
if (!dataDir || !Number.isInteger(workers) || workers < 1 || (mode !== undefined && mode !== 'on-demand')) {
  console.error('usage: node bench/serve-bench.mjs <dataDir> [workers, a whole number ≥ 1, then :on-demand to start them as the load asks]');
  process.exit(2);
}

const server = await startBenchApiServer({ dataDir, workers, workerStart: mode ?? 'at-start' });
process.once('SIGTERM', async () => {
  await server.stop();
  process.exit(0);
});
console.log(JSON.stringify({ url: server.url, caPem: server.caPem, token: server.token }));
