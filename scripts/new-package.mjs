#!/usr/bin/env node
// Scaffolds a package with the shape every Skiff package shares (see docs/contributing.md).
// usage: node scripts/new-package.mjs <dir> <npm-name> "<description>" [keyword…]
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [dir, name, description = '', ...keywords] = process.argv.slice(2);
if (!dir || !name) {
  console.error('usage: node scripts/new-package.mjs <dir> <npm-name> "<description>" [keyword…]');
  process.exit(1);
}
const isPlugin = dir.startsWith('plugins/');
const pkg = {
  name,
  version: '0.1.0',
  description,
  type: 'module',
  license: 'Apache-2.0',
  keywords,
  repository: { type: 'git', url: 'https://example.invalid/skiff.git', directory: dir },
  engines: { node: '>=20.19' },
  sideEffects: false,
  exports: {
    '.': { source: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
  },
  main: './dist/index.js',
  types: './dist/index.d.ts',
  files: ['dist'],
  scripts: {
    build: 'tsup --config ../../tsup.config.ts',
    test: 'vitest run --passWithNoTests --root . --config ../../vitest.package.config.ts',
  },
  dependencies: {},
  ...(isPlugin ? { peerDependencies: { '@skiff/kernel': '^0.1.0' } } : {}),
};
mkdirSync(join(dir, 'src'), { recursive: true });
if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
if (!existsSync(join(dir, 'tsconfig.json')))
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ extends: '../../tsconfig.base.json', compilerOptions: { outDir: 'dist', rootDir: 'src' }, include: ['src'] }, null, 2) + '\n',
  );
console.log(`created ${dir} (${name})`);
