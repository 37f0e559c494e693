import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './harness.js';

// The watch soak benchmark with small numbers: a real `skiff up` under --max-old-space-size=128 holds 50
// watches through 3 × 200 writes; every event must arrive once and in order, and the heap must return to
// within 10 MB of where it started once the watches end. `node bench/watch-soak.bench.mjs` runs the full
// size (200 watches × 1,000 writes) by hand.
describe('watch soak', () => {
  it('delivers every event once, in order, and releases the memory of ended watches', () => {
    const result = spawnSync(process.execPath, [join(REPO_ROOT, 'bench/watch-soak.bench.mjs')], {
      env: { ...process.env, SOAK_WATCHES: '50', SOAK_WRITES: '200' },
      encoding: 'utf8',
      timeout: 110_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).toBe(0);
    expect(output).toMatch(/30000 events delivered in .* each once and in order/);
    expect(output).toContain('watch soak passed');
  });
});
