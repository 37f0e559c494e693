import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@skiff/api';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from './main.js';
import { writeExport } from './store-export.js';
import { parseHeader } from './store-format.js';
import { createStoreKernel, openStore, storePlugins } from './store-kernel.js';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-store-cmd-'));
  dirs.push(dir);
  return dir;
}

async function run(cwd: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const result = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, cwd);
  return { result, out: out.join('\n'), err: err.join('\n') };
}

/** The standard preset's store (LMDB in <dataDir>/store) with its encryption at rest, as the commands open it. */
async function withStore<T>(cwd: string, dataDir: string, use: (store: Awaited<ReturnType<typeof openStore>>['store']) => Promise<T>): Promise<T> {
  const { kernel, provider } = await createStoreKernel({ cwd, overrides: { preset: 'standard', dataDir, logLevel: 'warn' } });
  try {
    const { store } = await openStore(kernel, provider);
    return await use(store);
  } finally {
    await kernel.stop();
  }
}

const PLAINTEXT = 'hunter2-export-test';
const OBJECTS: Record<string, KubeObject> = {
  '/registry/namespaces/shop': { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', uid: 'ns-uid' } },
  '/registry/secrets/shop/db': {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'shop', uid: 'secret-uid' },
    data: { password: Buffer.from(PLAINTEXT).toString('base64') },
  },
  '/registry/configmaps/shop/settings': {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'shop', uid: 'cm-uid', ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'db', uid: 'secret-uid' }] },
    data: { mode: 'fast' },
  },
};

async function seed(cwd: string, dataDir: string): Promise<void> {
  await withStore(cwd, dataDir, async (store) => {
    for (const [key, object] of Object.entries(OBJECTS)) await store.create(key, object);
  });
}

function withoutRevision(object: KubeObject): KubeObject {
  const { resourceVersion: _revision, ...metadata } = object.metadata ?? {};
  return { ...object, metadata };
}

describe('the store kernel', () => {
  it("holds only the preset's store and encryption plugins", async () => {
    const cwd = tempDir();
    const { kernel, provider } = await createStoreKernel({ cwd, overrides: { preset: 'standard', dataDir: join(cwd, 'd') } });
    expect(provider).toBe('@skiff/store');
    expect(kernel.listPlugins().map(({ plugin }) => plugin.name)).toEqual(['@skiff/store', '@skiff/plugin-encryption-at-rest']);
    expect([...storePlugins(kernel)].sort()).toEqual(['@skiff/plugin-encryption-at-rest', '@skiff/store']);
  });
});

describe('writeExport', () => {
  it('reads every page at the revision of the first, whatever is written meanwhile', async () => {
    const cwd = tempDir();
    const dataDir = join(cwd, 'data');
    await seed(cwd, dataDir);
    const lines: string[] = [];
    await withStore(cwd, dataDir, async (store) => {
      let written = false;
      const { header, counts } = await writeExport(
        store,
        async (chunk) => {
          lines.push(...chunk.split('\n'));
          if (!written) {
            written = true;
            await store.create('/registry/configmaps/shop/later', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later', namespace: 'shop' } });
            await store.delete('/registry/secrets/shop/db');
          }
        },
        { store: '@skiff/store', preset: 'standard', skiffVersion: 'test' },
        1,
      );
      expect(header).toMatchObject({ kind: 'SkiffStoreExport', version: 1, objects: 3, store: '@skiff/store' });
      expect(counts.toString()).toBe('1 ConfigMap, 1 Namespace, 1 Secret');
      expect(store.revision()).toBe(header.revision + 2);
    });
    expect(lines).toHaveLength(4);
    const keys = lines.slice(1).map((line) => (JSON.parse(line) as { key: string }).key);
    expect(keys).toEqual(Object.keys(OBJECTS).sort());
  });
});

describe('skiff store export and import', () => {
  it('moves every object, Secrets opened and sealed again, into an empty store; then refuses a store that holds objects', async () => {
    const cwd = tempDir();
    await seed(cwd, join(cwd, 'old'));

    const exported = await run(cwd, 'store', 'export', '--preset', 'standard', '--data-dir', 'old', '--output', 'cluster.jsonl');
    expect(exported.result).toEqual({ exitCode: 0 });
    expect(exported.out).toMatch(/^skiff: exported 3 objects at revision \d+ from @skiff\/store to cluster\.jsonl$/m);
    expect(exported.out).toContain('1 ConfigMap, 1 Namespace, 1 Secret');
    expect(exported.out).toContain('mode 0600');
    const file = join(cwd, 'cluster.jsonl');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(cwd).filter((name) => name.endsWith('.partial'))).toEqual([]);
    const [headerText, ...objectLines] = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(parseHeader('f', headerText)).toMatchObject({ objects: 3, preset: 'standard', store: '@skiff/store' });
    expect(objectLines).toHaveLength(3);
    // The export holds the Secret opened: its data as the API returns it.
    expect(readFileSync(file, 'utf8')).toContain(Buffer.from(PLAINTEXT).toString('base64'));

    const imported = await run(cwd, 'store', 'import', 'cluster.jsonl', '--preset', 'standard', '--data-dir', 'new');
    expect(imported.result).toEqual({ exitCode: 0 });
    expect(imported.out).toMatch(
      /^skiff: imported 3 objects into @skiff\/store \(exported from @skiff\/store at revision \d+; the store is at revision 3 now\)$/m,
    );
    expect(statSync(join(cwd, 'new')).mode & 0o777).toBe(0o700);
    await withStore(cwd, join(cwd, 'new'), async (store) => {
      const { items } = await store.list('/registry/');
      expect(Object.fromEntries(items.map(({ key, object }) => [key, withoutRevision(object)]))).toEqual(OBJECTS);
      for (const { object, revision } of items) expect(object.metadata?.resourceVersion).toBe(String(revision));
    });

    await expect(run(cwd, 'store', 'import', 'cluster.jsonl', '--preset', 'standard', '--data-dir', 'new')).rejects.toThrow(
      /^the target store \(@skiff\/store\) already holds objects under \/registry\/ \(such as \/registry\/configmaps\/shop\/settings\): import into a data dir whose store\/ is empty or absent/,
    );
  }, 60_000);

  it('writes to stdout, its own lines to stderr', async () => {
    const cwd = tempDir();
    await seed(cwd, join(cwd, 'old'));
    const { out, err } = await run(cwd, 'store', 'export', '--preset', 'standard', '--data-dir', 'old');
    const lines = out.split('\n');
    expect(lines).toHaveLength(4);
    expect(parseHeader('stdout', lines[0])).toMatchObject({ objects: 3 });
    expect(err).toMatch(/^skiff: exported 3 objects at revision \d+ from @skiff\/store$/m);
  }, 60_000);

  it('stops at a malformed line, a repeated key or a cut-off file, naming it, before writing anything', async () => {
    const cwd = tempDir();
    await seed(cwd, join(cwd, 'old'));
    await run(cwd, 'store', 'export', '--preset', 'standard', '--data-dir', 'old', '--output', 'good.jsonl');
    const lines = readFileSync(join(cwd, 'good.jsonl'), 'utf8').trimEnd().split('\n');
    const importing = (name: string, content: string) => {
      writeFileSync(join(cwd, name), content);
      return run(cwd, 'store', 'import', name, '--preset', 'standard', '--data-dir', 'new');
    };

    await expect(importing('bad.jsonl', [lines[0], lines[1], '{"key":"/registry/x",', lines[3]].join('\n'))).rejects.toThrow(/^bad\.jsonl:3: not JSON/);
    await expect(importing('twice.jsonl', [lines[0], lines[1], lines[1], lines[3]].join('\n'))).rejects.toThrow(
      /^twice\.jsonl:3: key \/registry\/\S+ appears again \(first on line 2\)$/,
    );
    await expect(importing('cut.jsonl', lines.slice(0, 3).join('\n'))).rejects.toThrow(
      'cut.jsonl: holds 2 objects but its header announces 3: the file is cut off (an export that did not finish?); nothing was imported',
    );
    await expect(importing('other.jsonl', '{"apiVersion":"v1","kind":"List","items":[]}\n')).rejects.toThrow('other.jsonl:1: not a skiff store export');
    appendFileSync(join(cwd, 'good.jsonl'), '\n');
    await expect(run(cwd, 'store', 'import', 'good.jsonl', '--preset', 'standard', '--data-dir', 'new')).rejects.toThrow('good.jsonl:5: empty line');
    // Nothing was opened, so nothing was made: not even the data dir.
    expect(existsSync(join(cwd, 'new'))).toBe(false);
  }, 60_000);

  it('says what is wrong with the command line in one line', async () => {
    const cwd = tempDir();
    await expect(run(cwd, 'store')).rejects.toThrow('skiff store needs a subcommand: export or import');
    await expect(run(cwd, 'store', 'dump')).rejects.toThrow('unknown store subcommand "dump" (known: export, import)');
    await expect(run(cwd, 'store', 'import')).rejects.toThrow('skiff store import needs the file skiff store export wrote');
    await expect(run(cwd, 'store', 'import', 'a', 'b')).rejects.toThrow('unexpected argument "b"');
    await expect(run(cwd, 'store', 'import', 'a', '--output', 'x')).rejects.toThrow("Unknown option '--output'");
    await expect(run(cwd, 'store', 'import', 'missing.jsonl')).rejects.toThrow('no such export file: missing.jsonl');
    await expect(run(cwd, 'store', 'export', '--preset', 'standard', '--data-dir', 'none')).rejects.toThrow(
      `data dir ${join(cwd, 'none')} does not exist: name the cluster's with --data-dir`,
    );
    expect(existsSync(join(cwd, 'none'))).toBe(false);
  });
});
