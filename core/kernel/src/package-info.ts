import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KernelError } from './errors.js';

/** A plugin's metadata as its package.json states it: spread it into `definePlugin`. */
export interface PackageInfo {
  name: string;
  version: string;
  /** The `@skiff/kernel` range the package asks for: its peer dependency (a plugin package) or its dependency (a core package). */
  kernel: string;
}

interface Manifest {
  name?: unknown;
  version?: unknown;
  peerDependencies?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
}

/**
 * A package's name and version, read from its package.json. Pass `new URL('../package.json', import.meta.url)`
 * from a module directly in `src/`: the sources and tsup's bundle in `dist/` both sit one level below the
 * package root, so the same line finds the same file before and after the build.
 */
export function packageVersion(packageJson: URL): { name: string; version: string } {
  const { name, version } = readManifest(packageJson);
  return { name, version };
}

/**
 * A plugin's name, version and supported kernel range, read from its package.json at import time, so
 * `lerna version` changes them with the package and nothing is written twice:
 *
 * ```ts
 * export default definePlugin({ ...packageInfo(new URL('../package.json', import.meta.url)), apply(kernel) { … } });
 * ```
 */
export function packageInfo(packageJson: URL): PackageInfo {
  const manifest = readManifest(packageJson);
  const kernel = manifest.peerDependencies?.['@skiff/kernel'] ?? manifest.dependencies?.['@skiff/kernel'];
  if (typeof kernel !== 'string' || !kernel) throw invalid(packageJson, 'it has no peer dependency (or dependency) on @skiff/kernel');
  return { name: manifest.name, version: manifest.version, kernel };
}

function readManifest(packageJson: URL): Manifest & { name: string; version: string } {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(packageJson, 'utf8')) as Manifest;
  } catch (err) {
    throw invalid(packageJson, (err as Error).message);
  }
  for (const field of ['name', 'version'] as const) {
    if (typeof manifest[field] !== 'string' || !manifest[field]) throw invalid(packageJson, `"${field}" must be a non-empty string`);
  }
  return manifest as Manifest & { name: string; version: string };
}

function invalid(packageJson: URL, detail: string): KernelError {
  return new KernelError('SKIFF_ERR_KERNEL_PACKAGE_INVALID', { file: fileURLToPath(packageJson), detail });
}
