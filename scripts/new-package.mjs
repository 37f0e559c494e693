#!/usr/bin/env node
// Scaffolds a package with the shape every Skiff package shares (see docs/contributing.md).
// usage: node scripts/new-package.mjs <dir> <npm-name> "<description>" [keyword…]
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, REPOSITORY_URL } from './workspace-packages.mjs';

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
  homepage: `${REPOSITORY_URL.replace(/^git\+|\.git$/g, '')}/tree/main/${dir}#readme`,
  bugs: { url: `${REPOSITORY_URL.replace(/^git\+|\.git$/g, '')}/issues` },
  repository: { type: 'git', url: REPOSITORY_URL, directory: dir },
  engines: { node: '>=20.19' },
  sideEffects: false,
  exports: {
    '.': { source: './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
  },
  main: './dist/index.js',
  types: './dist/index.d.ts',
  files: ['dist', 'src', '!src/**/*.test.ts', '!src/**/test-support', '!src/**/test-support.ts', '!src/**/test-*.ts'],
  publishConfig: { access: 'public' },
  scripts: {
    build: 'tsup --config ../../tsup.config.ts',
    prepack: 'npm run build',
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
if (!existsSync(join(dir, 'LICENSE'))) copyFileSync(join(REPO_ROOT, 'LICENSE'), join(dir, 'LICENSE'));
console.log(`created ${dir} (${name})`);
