import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../main.js';
import { COMMANDS } from '../usage.js';
import { PLUGIN_KINDS, type PluginKind } from './kinds.js';
import { pluginNames } from './names.js';
import { cliPackage } from './package-root.js';
import { scaffoldFiles, TOOL_VERSIONS } from './scaffold.js';

const CLI_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REPO_ROOT = resolve(CLI_ROOT, '../..');
const KINDS = Object.keys(PLUGIN_KINDS) as PluginKind[];

const roots: string[] = [];
function emptyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-new-'));
  roots.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of roots.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function run(cwd: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const result = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, cwd);
  return { result, out: out.join('\n'), err: err.join('\n') };
}

function readJson(file: string): Record<string, any> {
  return JSON.parse(readFileSync(file, 'utf8'));
}

describe('skiff new', () => {
  it('writes a whole package for every kind, with no placeholder left', async () => {
    const cwd = emptyDir();
    for (const kind of KINDS) {
      const { result, out } = await run(cwd, 'new', kind, `my-${kind}`);
      expect(result).toEqual({ exitCode: 0 });
      expect(out.split('\n')[0]).toMatch(
        new RegExp(`^created skiff-plugin-my-${kind}/: skiff-plugin-my-${kind}, an? ${kind} plugin for Skiff \\d+\\.\\d+\\.\\d+`),
      );
      const dir = join(cwd, `skiff-plugin-my-${kind}`);
      expect(readdirSync(dir).sort()).toEqual(['.gitignore', 'README.md', 'package.json', 'src', 'tsconfig.json', 'tsup.config.ts', 'vitest.config.ts']);
      expect(readdirSync(join(dir, 'src')).sort()).toEqual(['index.test.ts', 'index.ts']);
      for (const file of ['README.md', 'src/index.ts', 'src/index.test.ts', 'tsconfig.json']) {
        expect(readFileSync(join(dir, file), 'utf8'), `${kind} ${file}`).not.toMatch(/\{\{|\}\}/);
      }
      const source = readFileSync(join(dir, 'src/index.ts'), 'utf8');
      expect(source).toContain(`export const PLUGIN_NAME = 'skiff-plugin-my-${kind}';`);
      expect(source).toMatch(/definePlugin\(\{[\s\S]*options: \{/);
      expect(readFileSync(join(dir, 'src/index.test.ts'), 'utf8')).toMatch(/from '@skiff\/testing'/);
    }
  });

  it("writes a package.json that stands alone: keywords, engines, exports, scripts, pinned dev dependencies at the CLI's version", async () => {
    const cwd = emptyDir();
    await run(cwd, 'new', 'scheduler', 'zone-spread');
    const { version } = readJson(join(CLI_ROOT, 'package.json'));
    const pkg = readJson(join(cwd, 'skiff-plugin-zone-spread/package.json'));
    expect(pkg).toMatchObject({
      name: 'skiff-plugin-zone-spread',
      version: '0.1.0',
      type: 'module',
      keywords: ['skiff-plugin', 'skiff-scheduler'],
      engines: { node: '>=20.19' },
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      files: ['dist'],
      scripts: { build: 'tsup', test: 'vitest run', typecheck: 'tsc --noEmit', prepack: 'npm run build' },
      peerDependencies: { '@skiff/kernel': `^${version}` },
    });
    expect(pkg.devDependencies).toEqual({
      '@skiff/api': version,
      '@skiff/kernel': version,
      '@skiff/preset-dev': version,
      '@skiff/testing': version,
      '@types/node': '20.19.43',
      tsup: '8.5.0',
      typescript: '5.9.3',
      vitest: '3.2.4',
    });
    // The plugin reads its version and kernel range from this package.json.
    expect(readFileSync(join(cwd, 'skiff-plugin-zone-spread/src/index.ts'), 'utf8')).toContain("...packageInfo(new URL('../package.json', import.meta.url)),");
  });

  it('gives each kind its area keyword, and the controller @skiff/api as a peer (it imports it at run time)', async () => {
    const cwd = emptyDir();
    const areas: Record<string, string> = {};
    for (const kind of KINDS) {
      await run(cwd, 'new', kind, kind);
      const pkg = readJson(join(cwd, `skiff-plugin-${kind}/package.json`));
      areas[kind] = pkg.keywords[1];
      expect(Object.keys(pkg.peerDependencies)).toEqual(kind === 'controller' ? ['@skiff/api', '@skiff/kernel'] : ['@skiff/kernel']);
    }
    expect(areas).toEqual({
      admission: 'skiff-admission',
      scheduler: 'skiff-scheduler',
      authenticator: 'skiff-authn',
      authorizer: 'skiff-authz',
      controller: 'skiff-controller',
    });
  });

  it('writes a tsconfig that extends nothing, so the package builds outside the monorepo', async () => {
    const cwd = emptyDir();
    await run(cwd, 'new', 'admission', 'require-team');
    const tsconfig = readJson(join(cwd, 'skiff-plugin-require-team/tsconfig.json'));
    expect(tsconfig.extends).toBeUndefined();
    expect(tsconfig.compilerOptions).toMatchObject({ module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, isolatedModules: true });
  });

  it('names the scheduler framework plugin in PascalCase and a scoped package by its scope', async () => {
    const cwd = emptyDir();
    await run(cwd, 'new', 'scheduler', '@acme/zone-spread');
    const dir = join(cwd, 'skiff-plugin-zone-spread');
    expect(readJson(join(dir, 'package.json')).name).toBe('@acme/skiff-plugin-zone-spread');
    const source = readFileSync(join(dir, 'src/index.ts'), 'utf8');
    expect(source).toContain("export const PLUGIN_NAME = '@acme/skiff-plugin-zone-spread';");
    expect(source).toContain("export const SCHEDULER_PLUGIN_NAME = 'ZoneSpread';");
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('npm install ./acme-skiff-plugin-zone-spread-0.1.0.tgz');
  });

  it('writes under --dir, creating it, and says where', async () => {
    const cwd = emptyDir();
    const { out } = await run(cwd, 'new', 'authz', 'read-only', '--dir', 'plugins/new');
    expect(existsSync(join(cwd, 'plugins/new/skiff-plugin-read-only/src/index.ts'))).toBe(true);
    expect(out).toBe(
      [
        `created plugins/new/skiff-plugin-read-only/: skiff-plugin-read-only, an authorizer plugin for Skiff ${cliPackage().version}`,
        'next:',
        '  cd plugins/new/skiff-plugin-read-only',
        '  npm install',
        '  npm test',
      ].join('\n'),
    );
  });

  it('fills an existing empty folder, but refuses a non-empty one or a file, in one line, touching nothing', async () => {
    const cwd = emptyDir();
    mkdirSync(join(cwd, 'skiff-plugin-empty'));
    expect((await run(cwd, 'new', 'admission', 'empty')).result).toEqual({ exitCode: 0 });

    mkdirSync(join(cwd, 'skiff-plugin-taken'));
    writeFileSync(join(cwd, 'skiff-plugin-taken/notes.txt'), 'mine');
    await expect(run(cwd, 'new', 'admission', 'taken')).rejects.toThrow(/^skiff-plugin-taken already exists and is not empty; choose another name or --dir$/);
    expect(readdirSync(join(cwd, 'skiff-plugin-taken'))).toEqual(['notes.txt']);

    writeFileSync(join(cwd, 'skiff-plugin-file'), '');
    await expect(run(cwd, 'new', 'admission', 'file')).rejects.toThrow('skiff-plugin-file already exists and is not a folder');
  });

  it('says what is missing or wrong in one line', async () => {
    const cwd = emptyDir();
    await expect(run(cwd, 'new')).rejects.toThrow(
      'missing the plugin kind and name: skiff new <kind> <name> (kinds: admission, scheduler, authenticator, authorizer, controller)',
    );
    await expect(run(cwd, 'new', 'scheduler')).rejects.toThrow('missing the plugin name: skiff new scheduler <name>');
    await expect(run(cwd, 'new', 'webhook', 'x')).rejects.toThrow('unknown plugin kind "webhook"');
    await expect(run(cwd, 'new', 'admission', 'Deny')).rejects.toThrow('plugin name "Deny" must be lower-case');
    await expect(run(cwd, 'new', 'admission', 'a', 'b')).rejects.toThrow('unexpected argument "b"');
    await expect(run(cwd, 'new', 'admission', 'a', '--force')).rejects.toThrow("Unknown option '--force'");
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('prints its usage with --help, listing every kind', async () => {
    const { result, out } = await run(emptyDir(), 'new', '--help');
    expect(result).toEqual({ exitCode: 0 });
    expect(out).toBe(COMMANDS.new.usage);
    for (const kind of KINDS) expect(out).toMatch(new RegExp(`^ {15}${kind} +${PLUGIN_KINDS[kind].summary}$`, 'm'));
  });
});

describe('the scaffold', () => {
  it('pins the tool versions the monorepo itself builds and tests with', () => {
    const root = readJson(join(REPO_ROOT, 'package.json'));
    for (const [name, version] of Object.entries(TOOL_VERSIONS)) expect(root.devDependencies[name], name).toBe(version);
  });

  it("reads the CLI's version from its package.json at run time", () => {
    expect(cliPackage()).toEqual({ root: CLI_ROOT, version: readJson(join(CLI_ROOT, 'package.json')).version });
  });

  it('ships its templates with the CLI package', () => {
    expect(readJson(join(CLI_ROOT, 'package.json')).files).toContain('templates');
  });

  it('is what the guides show: every marked code block is a generated or example file, or a part of it', () => {
    // <!-- skiff new KIND NAME: PATH --> or <!-- file REPO-PATH -->, either with " (excerpt)", right before a code block.
    const marker = /<!-- (?:skiff new (\S+) (\S+): (\S+)|file (\S+))( \(excerpt\))? -->\n```\w*\n([\s\S]*?)```/g;
    let checked = 0;
    for (const guide of ['docs/writing-a-scheduler-plugin.md', 'docs/writing-an-admission-plugin.md']) {
      const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
      for (const [, kind, name, path, file, excerpt, shown] of text.matchAll(marker)) {
        const source = file ?? `skiff new ${kind} ${name}: ${path}`;
        const actual = file
          ? readFileSync(join(REPO_ROOT, file), 'utf8')
          : scaffoldFiles({
              kind: kind as PluginKind,
              names: pluginNames(name!),
              skiffVersion: cliPackage().version,
              templatesDir: join(CLI_ROOT, 'templates'),
            }).find((generated) => generated.path === path)?.content;
        expect(actual, `${guide}: ${source} exists`).toBeDefined();
        if (excerpt) expect(actual, `${guide} shows a part of ${source}`).toContain(shown);
        else expect(shown, `${guide} shows ${source}`).toBe(actual);
        checked++;
      }
    }
    expect(checked).toBe(6);
  });
});
