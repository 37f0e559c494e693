import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostDirectories } from './host-directories.js';

describe('HostDirectories', () => {
  let base: string;
  let directories: HostDirectories;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'skiff-host-dirs-'));
    directories = new HostDirectories(join(base, 'volumes'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('creates a world-writable directory per volume and removes it with its content', async () => {
    const path = directories.pathFor('pvc-1');
    await directories.create(path);
    expect(statSync(path).mode & 0o777).toBe(0o777);
    await writeFile(join(path, 'file'), 'data');
    await directories.remove(path);
    expect(existsSync(path)).toBe(false);
  });

  it('refuses paths outside its folder, and the folder itself', async () => {
    expect(directories.contains(join(base, 'volumes', 'pvc-1'))).toBe(true);
    expect(directories.contains(join(base, 'volumes'))).toBe(false);
    expect(directories.contains(join(base, 'volumes', '..', 'other'))).toBe(false);
    expect(directories.contains('/etc')).toBe(false);
    await expect(directories.remove(base)).rejects.toMatchObject({ code: 'SKIFF_ERR_STORAGE_OUTSIDE_ROOT' });
    expect(existsSync(base)).toBe(true);
  });
});
