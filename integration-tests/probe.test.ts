import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The hostile-user probe suite (bench/probe-hostile.mjs, `npm run probe`) as part of every test run: each case of
 * "Nothing stalls the server" against a real `skiff up` while /healthz is pinged every 50 ms. The suite decides
 * each case (a 4xx Status or a legitimate success, no ping ≥ 1 s, the list flood's reader p99 < 1 s and server RSS
 * ≤ 1.5 GiB) and exits non-zero when one fails; its table is printed when it does.
 */
const PROBE = fileURLToPath(new URL('../bench/probe-hostile.mjs', import.meta.url));

describe('the hostile-user probe suite', () => {
  it('answers every hostile case without stalling the server', { timeout: 600_000 }, async () => {
    const child = spawn(process.execPath, [PROBE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const verdicts = output.split('\n').filter((line) => /^(ok|FAIL) /.test(line));
    if (code !== 0) console.log(output);
    expect(verdicts.length).toBeGreaterThanOrEqual(16);
    expect(verdicts.filter((line) => line.startsWith('FAIL'))).toEqual([]);
    expect(code).toBe(0);
  });
});
