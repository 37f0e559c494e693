import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * What the docs checks (hooks-page.test.ts, errors-page.test.ts) read: the repository's production
 * sources, parsed, and the tables of its docs pages. Sources are read as text, never imported, so the
 * kernel's tests depend on no package above the kernel.
 */
export const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

const PACKAGE_FOLDERS = ['core', 'plugins', 'presets'];

export interface ProductionSource {
  /** Relative to the repository root, for messages. */
  path: string;
  /** The `name` of the package the file belongs to. */
  packageName: string;
  file: ts.SourceFile;
}

/** Tests and test support are not production code: the published packages leave them out too. */
function isProduction(name: string): boolean {
  return name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts') && name !== 'test-support.ts' && !name.startsWith('test-');
}

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'test-support' && name !== 'node_modules') tsFiles(path, out);
    } else if (isProduction(name)) out.push(path);
  }
  return out;
}

let cached: ProductionSource[] | undefined;

/** Every production TypeScript file under `src/` of every package in core/, plugins/ and presets/. */
export function productionSources(): ProductionSource[] {
  if (cached) return cached;
  cached = [];
  for (const folder of PACKAGE_FOLDERS) {
    for (const name of readdirSync(join(REPOSITORY_ROOT, folder))) {
      const packageDir = join(REPOSITORY_ROOT, folder, name);
      const manifest = join(packageDir, 'package.json');
      if (!existsSync(manifest) || !existsSync(join(packageDir, 'src'))) continue;
      const packageName = (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name;
      for (const path of tsFiles(join(packageDir, 'src'))) {
        const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
        cached.push({ path: relative(REPOSITORY_ROOT, path), packageName, file });
      }
    }
  }
  return cached;
}

/** Calls `visit` on every node of the file, depth first. */
export function walk(node: ts.Node, visit: (node: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

export function readDoc(page: string): string {
  return readFileSync(join(REPOSITORY_ROOT, 'docs', page), 'utf8');
}

/**
 * The body rows of the first table under the heading `heading` (`## Hooks`), each as its cells, trimmed.
 * A cell may not hold a `|`: these pages write alternatives in words.
 */
export function tableUnder(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,6} /.test(line)) break;
    if (!line.startsWith('|')) {
      if (rows.length) break;
      continue;
    }
    rows.push(
      line
        .trim()
        .replace(/^\||\|$/g, '')
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  // The header row and the |---| line.
  return rows.slice(2);
}

/** The contents of a cell's `code spans`, in order. */
export function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}
