import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePrivateDataDir } from './data-dir.js';

const roots: string[] = [];
function root(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-data-dir-'));
  roots.push(dir);
  return dir;
}
const modeOf = (path: string) => statSync(path).mode & 0o777;

afterEach(() => {
  for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('ensurePrivateDataDir', () => {
  it('creates a missing data dir, and its missing parents, with mode 0700', () => {
    const dir = join(root(), 'a', 'b', '.skiff');
    expect(ensurePrivateDataDir(dir)).toBeUndefined();
    expect(modeOf(dir)).toBe(0o700);
  });

  it('tightens an existing data dir that others may read, and says what it was', () => {
    const dir = root();
    chmodSync(dir, 0o755);
    expect(ensurePrivateDataDir(dir)).toBe(0o755);
    expect(modeOf(dir)).toBe(0o700);
    expect(ensurePrivateDataDir(dir)).toBeUndefined();
  });

  it('names the data dir when it cannot be used', () => {
    const file = join(root(), 'not-a-dir');
    writeFileSync(file, '');
    expect(() => ensurePrivateDataDir(file)).toThrow(`cannot make the data dir ${file} private (mode 0700)`);
  });
});
