import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { KERNEL_VERSION } from './kernel.js';
import { packageInfo } from './package-info.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function manifest(content: unknown): URL {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-package-info-'));
  dirs.push(dir);
  const file = join(dir, 'package.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return pathToFileURL(file);
}

describe('packageInfo', () => {
  it("reads name, version and the kernel peer range, or else the kernel dependency's range", () => {
    const peer = { name: 'skiff-plugin-x', version: '1.2.3', peerDependencies: { '@skiff/kernel': '^0.4.0' }, devDependencies: { '@skiff/kernel': '^0.4.1' } };
    expect(packageInfo(manifest(peer))).toEqual({ name: 'skiff-plugin-x', version: '1.2.3', kernel: '^0.4.0' });
    expect(packageInfo(manifest({ name: '@skiff/store', version: '0.4.0', dependencies: { '@skiff/kernel': '^0.4.0' } })).kernel).toBe('^0.4.0');
  });

  it('fails with a coded error naming the file and what is wrong', () => {
    const noKernel = manifest({ name: 'skiff-plugin-x', version: '1.0.0' });
    expect(() => packageInfo(noKernel)).toThrow(
      expect.objectContaining({
        code: 'SKIFF_ERR_KERNEL_PACKAGE_INVALID',
        message: expect.stringContaining('it has no peer dependency (or dependency) on @skiff/kernel'),
      }),
    );
    expect(() => packageInfo(manifest({ name: 'skiff-plugin-x', peerDependencies: { '@skiff/kernel': '^0.1.0' } }))).toThrow(
      '"version" must be a non-empty string',
    );
    expect(() => packageInfo(manifest('{ not json'))).toThrow(/^cannot read plugin metadata from \/.*package\.json: /);
  });

  it("gives the kernel its own package.json's version", () => {
    expect(KERNEL_VERSION).toBe(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  });
});
