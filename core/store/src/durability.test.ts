import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TempStores } from './test-support/temp-store.js';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const stores = new TempStores();
let bundleDir: string;
let childScript: string;

beforeAll(async () => {
  // The bundle lives under the package so that `lmdb` resolves from it like from the sources.
  const cacheDir = join(packageDir, 'node_modules', '.cache');
  await mkdir(cacheDir, { recursive: true });
  bundleDir = await mkdtemp(join(cacheDir, 'store-durability-'));
  childScript = join(bundleDir, 'crash-writer.mjs');
  await build({
    entryPoints: [join(packageDir, 'src', 'test-support', 'crash-writer.ts')],
    outfile: childScript,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
});
afterAll(() => rm(bundleDir, { recursive: true, force: true }));
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  // A child left behind by a failed test must not outlive it.
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await stores.cleanup();
});

function runChild(mode: 'write' | 'idle', path: string): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [childScript, mode, path], { stdio: 'pipe' });
  children.push(child);
  return child;
}

function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('durability', () => {
  it('keeps every acknowledged write when the process is killed with SIGKILL mid-stream', async () => {
    const path = await stores.dir();
    const child = runChild('write', path);
    const exit = exited(child);
    const acked = new Map<string, number>();
    for await (const line of createInterface({ input: child.stdout })) {
      const [word, revision, key] = line.split(' ');
      if (word === 'acked') acked.set(key!, Number(revision));
      if (acked.size === 400) child.kill('SIGKILL');
    }
    expect(await exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(acked.size).toBeGreaterThanOrEqual(400);

    const store = await stores.open({ path });
    const highestAcked = Math.max(...acked.values());
    expect(store.revision()).toBeGreaterThanOrEqual(highestAcked);
    for (const [key, revision] of acked) {
      expect((await store.get(key))?.revision, key).toBe(revision);
    }
    // The event log survived too: a watch from 0 replays every acknowledged revision.
    const seen = new Set<number>();
    for await (const event of store.watch('/registry/crash/', 0, new AbortController().signal)) {
      seen.add(event.revision);
      if (event.revision === store.revision()) break;
    }
    for (const revision of acked.values()) expect(seen.has(revision)).toBe(true);
    expect((await store.create('/registry/crash/after', { metadata: { name: 'after' } })).revision).toBe(store.revision());
  });

  it('does not keep the process alive with its compaction timer', async () => {
    const path = await stores.dir();
    const child = runChild('idle', path);
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    let timer: NodeJS.Timeout | undefined;
    const stillRunning = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), 10_000)));
    const outcome = await Promise.race([exited(child), stillRunning]);
    clearTimeout(timer);
    expect(stderr.join('')).toBe('');
    expect(outcome).toEqual({ code: 0, signal: null });
  });
});
