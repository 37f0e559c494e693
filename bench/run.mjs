#!/usr/bin/env node
// Runs every benchmark in this folder (or those named on the command line), one after another.
// Each prints its own numbers next to a baseline measured in the same run. Needs `npm run build` first.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
let failed = 0;
for (const bench of benches) {
  console.log(`\n== ${bench}`);
  const result = spawnSync(process.execPath, [join(here, bench)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
