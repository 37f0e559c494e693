import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomically } from './atomic-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-atomic-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('writeFileAtomically', () => {
  it('replaces a file with exactly the mode asked for, leaving no temporary file', () => {
    const path = join(dir, 'admin.kubeconfig');
    writeFileSync(path, 'old', { mode: 0o644 });
    writeFileAtomically(path, 'new', 0o600);
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['admin.kubeconfig']);
  });

  it('creates missing folders', () => {
    const path = join(dir, 'a', 'b', 'ca.crt');
    writeFileAtomically(path, Buffer.from('certificate'), 0o644);
    expect(readFileSync(path, 'utf8')).toBe('certificate');
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  it('never lets a concurrent reader see the file empty or half written', async () => {
    const path = join(dir, 'admin.kubeconfig');
    const content = (n: number) => `${String(n).padStart(8, '0')}${'x'.repeat(64 * 1024)}`;
    writeFileAtomically(path, content(0), 0o600);
    // A reader in another thread, so reads really interleave with the writes.
    const reader = new Worker(
      `const { readFileSync } = require('node:fs'); const { parentPort, workerData } = require('node:worker_threads');
       let reads = 0, bad = 0; const until = Date.now() + 1500;
       while (Date.now() < until) { const text = readFileSync(workerData, 'utf8'); reads++; if (text.length !== 8 + 64 * 1024) bad++; }
       parentPort.postMessage({ reads, bad });`,
      { eval: true, workerData: path },
    );
    const result = new Promise<{ reads: number; bad: number }>((resolve) => reader.once('message', resolve));
    const until = Date.now() + 1000;
    for (let n = 1; Date.now() < until; n++) writeFileAtomically(path, content(n), 0o600);
    const { reads, bad } = await result;
    expect(reads).toBeGreaterThan(0);
    expect(bad).toBe(0);
  });
});
