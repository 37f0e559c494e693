#!/usr/bin/env node
// Finds import cycles among the repository's TypeScript sources (part of `npm run lint`). Value imports
// only: `import type` and `export type` vanish at run time and cannot make a cycle. Relative imports
// resolve as NodeNext does ('./x.js' → x.ts, './dir/index.js'), and '@skiff/<name>' resolves to that
// workspace package's src/index.ts, so a cycle through another package's entry is found too.
// Prints each cycle as a chain of files and exits 1 if there is any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { workspacePackages } from './workspace-packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['core', 'plugins', 'presets'];
const SKIP = new Set(['node_modules', 'dist', 'templates']);

/** '@skiff/x' and its subpaths ('@skiff/x/y') → the source file the `source` export condition names. */
const packageEntries = new Map(
  workspacePackages(root)
    .flatMap(({ dir, pkg }) =>
      Object.entries(pkg.exports ?? { '.': { source: './src/index.ts' } }).map(([subpath, target]) => [
        subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`,
        join(root, dir, (typeof target === 'object' && target.source) || 'src/index.ts'),
      ]),
    )
    .filter(([, entry]) => existsSync(entry)),
);

function sourceFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveImport(from, specifier) {
  if (packageEntries.has(specifier)) return packageEntries.get(specifier);
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return undefined;
}

/** The files `file` imports for their values. */
function valueImports(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const targets = [];
  for (const statement of source.statements) {
    let specifier;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const typeOnly =
        clause &&
        (clause.isTypeOnly ||
          (!clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      const clause = statement.exportClause;
      if (!(clause && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly))) specifier = statement.moduleSpecifier;
    }
    if (specifier && ts.isStringLiteral(specifier)) {
      const target = resolveImport(file, specifier.text);
      if (target) targets.push(target);
    }
  }
  return targets;
}

const files = SOURCE_DIRS.flatMap((area) => sourceFiles(join(root, area)));
const graph = new Map(files.map((file) => [file, valueImports(file)]));

// Tarjan's strongly connected components, iteratively: any component of more than one file is a cycle.
let index = 0;
const state = new Map();
const stack = [];
const cycles = [];
for (const start of graph.keys()) {
  if (state.has(start)) continue;
  const work = [[start, 0]];
  while (work.length) {
    const frame = work[work.length - 1];
    const [node, next] = frame;
    if (next === 0) {
      state.set(node, { index, low: index, onStack: true });
      index++;
      stack.push(node);
    }
    const edges = graph.get(node) ?? [];
    if (next < edges.length) {
      frame[1]++;
      const target = edges[next];
      if (!state.has(target)) work.push([target, 0]);
      else if (state.get(target).onStack) state.get(node).low = Math.min(state.get(node).low, state.get(target).index);
      continue;
    }
    work.pop();
    if (work.length) {
      const parent = state.get(work[work.length - 1][0]);
      parent.low = Math.min(parent.low, state.get(node).low);
    }
    if (state.get(node).low === state.get(node).index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        state.get(member).onStack = false;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component);
    }
  }
}

for (const component of cycles) console.error(`import cycle among:\n${component.map((file) => `  ${relative(root, file)}`).join('\n')}`);
console.log(`${files.length} files checked, ${cycles.length} import cycles`);
process.exit(cycles.length ? 1 : 0);
