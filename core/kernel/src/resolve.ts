import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isJsonObject } from '@skiff/api';

/**
 * Resolves a package name or path to a file, the way `npm install x` users expect: from `fromDir`'s
 * node_modules upwards. Relative paths are taken from `fromDir`.
 */
export function resolveModule(specifier: string, fromDir: string): string | undefined {
  if (specifier.startsWith('.') || isAbsolute(specifier)) {
    const path = resolve(fromDir, specifier);
    for (const candidate of [path, `${path}.js`, `${path}.mjs`, join(path, 'index.js')]) {
      if (existsSync(candidate) && !candidate.endsWith('/')) {
        if (existsSync(join(candidate, 'package.json'))) return packageEntry(candidate);
        try {
          readFileSync(candidate);
          return candidate;
        } catch {
          continue;
        }
      }
    }
    return undefined;
  }
  try {
    return createRequire(join(fromDir, '__skiff_resolve__.js')).resolve(specifier);
  } catch {
    // ESM-only packages without a "default"/"require" export condition: find the folder and read its entry.
    let dir = fromDir;
    for (;;) {
      const candidate = join(dir, 'node_modules', specifier);
      if (existsSync(join(candidate, 'package.json'))) return packageEntry(candidate);
      const parent = dirname(dir);
      if (parent === dir) return undefined;
      dir = parent;
    }
  }
}

function packageEntry(dir: string): string | undefined {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    exports?: unknown;
    main?: string;
  };
  const fromExports = (exp: unknown): string | undefined => {
    if (typeof exp === 'string') return exp;
    if (isJsonObject(exp)) {
      if ('.' in exp) return fromExports(exp['.']);
      for (const key of ['import', 'default', 'node']) if (key in exp) return fromExports(exp[key]);
    }
    return undefined;
  };
  const entry = fromExports(pkg.exports) ?? pkg.main ?? 'index.js';
  const file = join(dir, entry);
  return existsSync(file) ? file : undefined;
}

export async function importDefault(file: string): Promise<unknown> {
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  return mod.default ?? mod;
}
