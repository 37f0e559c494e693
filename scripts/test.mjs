#!/usr/bin/env node
// Runs every test (unit, then integration against the built CLI with the real kubectl) and closes
// with one plain summary line: "tests: N passed, N failed[, N skipped]".
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

const results = '.vitest-results.json';
const args = process.argv.slice(2);
if (!existsSync('core/cli/dist/bin.js')) {
  console.error('skiff is not built: run `npm ci` (or `npm run build`) first');
  process.exit(1);
}
rmSync(results, { force: true });
const run = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${results}`, ...args],
  { stdio: 'inherit' },
);
let summary = 'tests: 0 passed, 1 failed';
if (existsSync(results)) {
  const report = JSON.parse(readFileSync(results, 'utf8'));
  const skipped = report.numPendingTests + report.numTodoTests;
  summary = `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`;
  rmSync(results, { force: true });
}
console.log(summary);
process.exit(run.status ?? 1);
