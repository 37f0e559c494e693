#!/usr/bin/env node
// Scaffolds a workspace package with the shape every Skiff package shares (see docs/contributing.md):
// package.json, tsconfig.json, README.md, LICENSE, src/index.ts and a src/index.test.ts that passes.
// A plugin (plugins/<area>-<name>) default-exports a definePlugin that reads its version and kernel range
// from package.json; a preset (presets/<name>) default-exports a definePreset. Files that exist are kept.
// usage: node scripts/new-package.mjs <dir> <npm-name> "<description>" [keyword…]
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { REPO_ROOT, REPOSITORY_URL } from './workspace-packages.mjs';

const [dir, name, description = '', ...keywords] = process.argv.slice(2);
if (!dir || !name) {
  console.error('usage: node scripts/new-package.mjs <dir> <npm-name> "<description>" [keyword…]');
  process.exit(1);
}
const kind = dir.startsWith('plugins/') ? 'plugin' : dir.startsWith('presets/') ? 'preset' : 'library';
// Every package has the release's version (lerna's fixed mode); `lerna version` moves them all together.
const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'lerna.json'), 'utf8'));
const kernelRange = `^${version}`;
const DEFAULT_KEYWORDS = { plugin: ['skiff-plugin', `skiff-${basename(dir).split('-')[0]}`], preset: ['skiff-preset'], library: ['skiff'] };
const DEPENDENCIES = {
  // A plugin peer-depends on the kernel (a cluster has exactly one) and gets it for its own tests as a dev dependency.
  plugin: { peerDependencies: { '@skiff/kernel': kernelRange }, devDependencies: { '@skiff/kernel': kernelRange } },
  preset: { dependencies: { '@skiff/kernel': kernelRange } },
  library: { dependencies: {} },
};
const repositoryPage = REPOSITORY_URL.replace(/^git\+|\.git$/g, '');

const pkg = {
  name,
  version,
  description,
  type: 'module',
  license: 'Apache-2.0',
  keywords: keywords.length > 0 ? keywords : DEFAULT_KEYWORDS[kind],
  homepage: `${repositoryPage}/tree/main/${dir}#readme`,
  bugs: { url: `${repositoryPage}/issues` },
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
    typecheck: 'tsc --noEmit -p tsconfig.json --customConditions source',
  },
  ...DEPENDENCIES[kind],
};

// As Prettier prints it (JSON.stringify would spread the short array over three lines).
const tsconfig = `{
  "extends": "../../tsconfig.base.json",
  "compilerOptions": {
    "outDir": "dist",
    "rootDir": "src"
  },
  "include": ["src"]
}
`;

const sources = {
  plugin: {
    index: `import { definePlugin, packageInfo } from '@skiff/kernel';

/** The npm package name: cluster configs name the plugin by it, and every tap carries it. */
export const PLUGIN_NAME = '${name}';

/** ${description} */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply() {},
});
export default plugin;
`,
    test: `import { Kernel } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import plugin, { PLUGIN_NAME } from './index.js';

describe(PLUGIN_NAME, () => {
  it('loads into a kernel: name, version and kernel range check out', () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    expect(kernel.has(PLUGIN_NAME)).toBe(true);
  });
});
`,
  },
  preset: {
    index: `import { definePreset } from '@skiff/kernel';

/** ${description} */
export default definePreset({
  name: '${name}',
  plugins: [],
});
`,
    test: `import { describe, expect, it } from 'vitest';
import preset from './index.js';

describe('${name}', () => {
  it('names itself', () => {
    expect(preset.name).toBe('${name}');
  });
});
`,
  },
  library: {
    index: `/** ${description} */
export {};
`,
    test: `import { describe, expect, it } from 'vitest';

describe('${name}', () => {
  it('loads', async () => {
    await expect(import('./index.js')).resolves.toBeDefined();
  });
});
`,
  },
}[kind];

const readme = [
  `# ${name}`,
  '',
  description,
  ...(kind === 'plugin' ? ['', 'No options.', '', '```js', `export default { plugins: ['${name}'] };`, '```'] : []),
  '',
].join('\n');

const files = [
  ['package.json', `${JSON.stringify(pkg, null, 2)}\n`],
  ['tsconfig.json', tsconfig],
  ['README.md', readme],
  ['src/index.ts', sources.index],
  ['src/index.test.ts', sources.test],
];
mkdirSync(join(dir, 'src'), { recursive: true });
for (const [path, content] of files) if (!existsSync(join(dir, path))) writeFileSync(join(dir, path), content);
if (!existsSync(join(dir, 'LICENSE'))) copyFileSync(join(REPO_ROOT, 'LICENSE'), join(dir, 'LICENSE'));
console.log(`created ${dir} (${name} ${version}); \`npm install\` adds it to the workspace and package-lock.json`);
