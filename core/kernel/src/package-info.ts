import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errorMessage, isJsonObject } from '@skiff/api';
import { KernelError } from './errors.js';

/** A plugin's metadata as its package.json states it: spread it into `definePlugin`. */
export interface PackageInfo {
  name: string;
  version: string;
  /** The `@skiff/kernel` range the package asks for: its peer dependency (a plugin package) or its dependency (a core package). */
  kernel: string;
}

/** What is read from a package.json. */
interface Manifest {
  name: string;
  version: string;
  peerDependencies: Record<string, unknown>;
  dependencies: Record<string, unknown>;
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
  const kernel = manifest.peerDependencies['@skiff/kernel'] ?? manifest.dependencies['@skiff/kernel'];
  if (typeof kernel !== 'string' || !kernel) throw invalid(packageJson, 'it has no peer dependency (or dependency) on @skiff/kernel');
  return { name: manifest.name, version: manifest.version, kernel };
}

function readManifest(packageJson: URL): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(packageJson, 'utf8'));
  } catch (err) {
    throw invalid(packageJson, errorMessage(err));
  }
  const manifest = isJsonObject(parsed) ? parsed : {};
  const { name, version, peerDependencies, dependencies } = manifest;
  if (typeof name !== 'string' || !name) throw invalid(packageJson, '"name" must be a non-empty string');
  if (typeof version !== 'string' || !version) throw invalid(packageJson, '"version" must be a non-empty string');
  return {
    name,
    version,
    peerDependencies: isJsonObject(peerDependencies) ? peerDependencies : {},
    dependencies: isJsonObject(dependencies) ? dependencies : {},
  };
}

function invalid(packageJson: URL, detail: string): KernelError {
  return new KernelError('SKIFF_ERR_KERNEL_PACKAGE_INVALID', { file: fileURLToPath(packageJson), detail });
}
