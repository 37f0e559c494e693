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

function runChild(mode: 'mixed' | 'idle', path: string): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [childScript, mode, path], { stdio: 'pipe' });
  children.push(child);
  return child;
}

function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('durability', () => {
  it('loses nothing and reuses no revision when writes fail inside concurrent batches, and a resumed watch sees every later event once', async () => {
    const path = await stores.dir();
    const child = runChild('mixed', path);
    const exit = exited(child);
    const acked = new Map<string, number>();
    const failed = new Set<string>();
    const seenByChild: number[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      const [word, revision, key] = line.split(' ');
      if (word === 'acked') acked.set(key!, Number(revision));
      if (word === 'failed') failed.add(revision!);
      if (word === 'seen') seenByChild.push(Number(revision));
      if (acked.size === 400) child.kill('SIGKILL');
    }
    expect(await exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(failed.size).toBeGreaterThanOrEqual(50);
    expect(seenByChild.length).toBeGreaterThan(0);

    const store = await stores.open({ path });
    // No revision was handed out twice, and every acknowledged write is there at its revision.
    expect(new Set(acked.values()).size).toBe(acked.size);
    for (const [key, revision] of acked) expect((await store.get(key))?.revision, key).toBe(revision);
    // A failed write left no object behind (the existing key kept its first object).
    for (const key of failed) if (key.includes('/poison/')) expect(await store.get(key), key).toBeUndefined();
    expect((await store.get('/registry/crash/0'))?.object.data).toEqual({ n: '0' });

    // The log holds exactly one event per revision, 1..revision, with no gap a failed write left.
    const all: number[] = [];
    const keys = new Set<string>();
    for await (const event of store.watch('/registry/crash/', 0, new AbortController().signal)) {
      all.push(event.revision);
      keys.add(event.key);
      if (event.revision === store.revision()) break;
    }
    expect(all).toEqual(Array.from({ length: store.revision() }, (_, i) => i + 1));
    expect([...keys].some((key) => key.includes('/poison/'))).toBe(false);
    // The child's watch delivered in order, without duplicates; resumed from its last revision, a
    // watch sees every later event exactly once.
    expect(seenByChild).toEqual([...seenByChild].sort((a, b) => a - b));
    expect(new Set(seenByChild).size).toBe(seenByChild.length);
    const last = seenByChild.at(-1)!;
    const resumed: number[] = [];
    if (last < store.revision()) {
      for await (const event of store.watch('/registry/crash/', last, new AbortController().signal)) {
        resumed.push(event.revision);
        if (event.revision === store.revision()) break;
      }
    }
    expect(resumed).toEqual(Array.from({ length: store.revision() - last }, (_, i) => last + i + 1));
    // The next write continues right after the last used revision.
    expect((await store.create('/registry/crash/after', { metadata: { name: 'after' } })).revision).toBe(all.length + 1);
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
