import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PLUGIN_KINDS, type PluginKind } from './kinds.js';
import type { PluginNames } from './names.js';

/** The version a new plugin package starts at. */
export const NEW_PACKAGE_VERSION = '0.1.0';

/**
 * Tool versions of a new plugin package: the ones Skiff itself builds and tests with on Node 20
 * (the monorepo's root devDependencies; a unit test keeps them equal).
 */
export const TOOL_VERSIONS = Object.freeze({
  '@types/node': '20.19.43',
  tsup: '8.5.0',
  typescript: '5.9.3',
  vitest: '3.2.4',
});

export interface ScaffoldOptions {
  kind: PluginKind;
  names: PluginNames;
  /** The Skiff release the package is written against: the CLI's own version. */
  skiffVersion: string;
  /** core/cli/templates. */
  templatesDir: string;
}

/** One file of the new package: its path inside the package folder and its text. */
export interface ScaffoldFile {
  path: string;
  content: string;
}

/** Every file of a new plugin package, in the order they are written. */
export function scaffoldFiles({ kind, names, skiffVersion, templatesDir }: ScaffoldOptions): ScaffoldFile[] {
  const { area } = PLUGIN_KINDS[kind];
  const values: Record<string, string> = {
    package: names.packageName,
    name: names.name,
    Name: names.pascalName,
    kernelRange: `^${skiffVersion}`,
    areaKeyword: `skiff-${area}`,
    tarball: `${names.scope === undefined ? '' : `${names.scope}-`}${names.folder}-${NEW_PACKAGE_VERSION}.tgz`,
  };
  const template = (path: string) => fill(readFileSync(join(templatesDir, path), 'utf8'), values, path);
  return [
    { path: 'package.json', content: `${JSON.stringify(packageJson(kind, names, skiffVersion), null, 2)}\n` },
    { path: 'tsconfig.json', content: template('common/tsconfig.json') },
    { path: 'tsup.config.ts', content: template('common/tsup.config.ts') },
    { path: 'vitest.config.ts', content: template('common/vitest.config.ts') },
    // npm would not ship a file named .gitignore inside the CLI's own package, so the template drops the dot.
    { path: '.gitignore', content: template('common/gitignore') },
    { path: 'README.md', content: template(`${kind}/README.md`) + template('common/README-develop.md') },
    { path: 'src/index.ts', content: template(`${kind}/src/index.ts`) },
    { path: 'src/index.test.ts', content: template(`${kind}/src/index.test.ts`) },
  ];
}

/** Replaces every `{{key}}`; a key the template names but `values` lacks is a bug in the template. */
function fill(text: string, values: Record<string, string>, path: string): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    if (!Object.hasOwn(values, key)) throw new Error(`template ${path} uses an unknown placeholder {{${key}}}`);
    return values[key]!;
  });
}

/** The package.json of a new plugin: the shape every Skiff plugin package has, standalone. */
export function packageJson(kind: PluginKind, names: PluginNames, skiffVersion: string): Record<string, unknown> {
  const { description, area, runtimePeers } = PLUGIN_KINDS[kind];
  const skiffRange = `^${skiffVersion}`;
  return {
    name: names.packageName,
    version: NEW_PACKAGE_VERSION,
    description,
    type: 'module',
    license: 'Apache-2.0',
    keywords: ['skiff-plugin', `skiff-${area}`],
    engines: { node: '>=20.19' },
    sideEffects: false,
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    main: './dist/index.js',
    types: './dist/index.d.ts',
    files: ['dist'],
    scripts: {
      build: 'tsup',
      test: 'vitest run',
      typecheck: 'tsc --noEmit',
      prepack: 'npm run build',
    },
    peerDependencies: Object.fromEntries(['@skiff/kernel', ...runtimePeers].sort().map((name) => [name, skiffRange])),
    devDependencies: Object.fromEntries(
      [
        ...['@skiff/api', '@skiff/kernel', '@skiff/preset-dev', '@skiff/testing'].map((name) => [name, skiffVersion] as const),
        ...Object.entries(TOOL_VERSIONS),
      ].sort(([a], [b]) => a.localeCompare(b)),
    ),
  };
}
