import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import devPreset from '@skiff/preset-dev';
import type { PluginSpec, SkiffPlugin } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import localPreset from './index.js';

interface Manifest {
  name: string;
  version: string;
  peerDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
}

/** An installed package's package.json, found the way Node finds the package: in the node_modules folders upwards. */
function manifestOf(name: string): Manifest {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed`);
  }
}

const packageNames = (plugins: PluginSpec[]) =>
  plugins.map((spec) => (Array.isArray(spec) ? spec[0] : spec)).filter((ref): ref is string => typeof ref === 'string');

// The local preset extends the dev preset: together they name every plugin package Skiff ships.
describe.each([...new Set([...packageNames(devPreset.plugins), ...packageNames(localPreset.plugins)])])('%s', (name) => {
  it("has its package.json's name and version, and supports the kernel range the package asks for", async () => {
    const plugin = ((await import(name)) as { default: SkiffPlugin }).default;
    const manifest = manifestOf(name);
    expect({ name: plugin.name, version: plugin.version, kernel: plugin.kernel }).toEqual({
      name: manifest.name,
      version: manifest.version,
      kernel: manifest.peerDependencies?.['@skiff/kernel'] ?? manifest.dependencies?.['@skiff/kernel'],
    });
  });
});
