import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CliPackage {
  /** The folder holding the CLI's package.json (and its templates). */
  root: string;
  version: string;
}

/**
 * The CLI's own package, found from this module's file: src/new/*.ts when run from source, dist/bin.js
 * once built and installed. Read at run time, so a published CLI writes the @skiff/* versions it belongs to.
 */
export function cliPackage(from = fileURLToPath(import.meta.url)): CliPackage {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
      if (typeof version !== 'string') throw new Error(`${file} has no version`);
      return { root: dir, version };
    }
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
