import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCluster } from './boot.js';

let dir: string;

/** Writes a local npm package (as `npm install` would leave it) into dir/node_modules. */
function installPackage(name: string, source: string, root = dir) {
  const pkgDir = join(root, 'node_modules', name);
  mkdirSync(pkgDir, { recursive: true });
  writeFileSync(join(pkgDir, 'package.json'), JSON.stringify({ name, type: 'module', exports: { '.': { import: './index.js' } } }));
  writeFileSync(join(pkgDir, 'index.js'), source);
}

const pluginSource = (name: string, body = '') => `
export default {
  name: '${name}', version: '1.0.0', kernel: '^0.1.0',
  options: { type: 'object', properties: { label: { type: 'string' } } },
  apply(kernel, options) { kernel.provide('${name}:options', options); ${body} },
};`;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-boot-'));
  installPackage(
    'skiff-preset-base',
    `export default { name: 'skiff-preset-base', plugins: ['skiff-plugin-a', ['skiff-plugin-b', { label: 'from-base' }]], config: { nodes: 2 } };`,
  );
  installPackage(
    'skiff-preset-child',
    `export default { name: 'skiff-preset-child', extends: ['base'], plugins: [['skiff-plugin-b', { label: 'from-child' }]] };`,
  );
  installPackage('skiff-plugin-a', pluginSource('skiff-plugin-a'));
  installPackage('skiff-plugin-b', pluginSource('skiff-plugin-b'));
  installPackage('skiff-plugin-c', pluginSource('skiff-plugin-c'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const names = (kernel: Awaited<ReturnType<typeof createCluster>>) => kernel.listPlugins().map((p) => p.plugin.name);

describe('createCluster', () => {
  it('finds skiff.config.mjs, resolves the preset chain and plugins from the config folder', async () => {
    writeFileSync(
      join(dir, 'skiff.config.mjs'),
      `export default { preset: 'child', logLevel: 'silent', plugins: ['skiff-plugin-c', ['skiff-plugin-a', false]] };`,
    );
    const kernel = await createCluster({ cwd: dir });
    expect(names(kernel)).toEqual(['skiff-plugin-b', 'skiff-plugin-c']);
    expect(kernel.resolve('skiff-plugin-b:options')).toEqual({ label: 'from-child' });
    expect(kernel.config).toMatchObject({ preset: 'child', nodes: 2, dataDir: join(dir, '.skiff'), rootDir: dir });
  });

  it('reads .skiffrc.json and the skiff key of package.json', async () => {
    writeFileSync(join(dir, '.skiffrc.json'), JSON.stringify({ preset: 'base', logLevel: 'silent', port: 7000 }));
    expect((await createCluster({ cwd: dir })).config.port).toBe(7000);
    rmSync(join(dir, '.skiffrc.json'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', skiff: { preset: 'base', logLevel: 'silent', nodes: 5 } }));
    expect((await createCluster({ cwd: dir })).config.nodes).toBe(5);
  });

  it('lets overrides (CLI flags) win over the file and the preset', async () => {
    writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ preset: 'base', nodes: 3, logLevel: 'silent' }));
    const kernel = await createCluster({ cwd: dir, overrides: { nodes: 4, port: undefined, dataDir: 'state' } });
    expect(kernel.config).toMatchObject({ nodes: 4, port: 6443, dataDir: join(dir, 'state') });
  });

  it('names a missing plugin in one line', async () => {
    writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ preset: 'base', logLevel: 'silent', plugins: ['skiff-plugin-nope'] }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(`plugin "skiff-plugin-nope" not found (is it installed? looked from ${dir})`);
  });

  it('names the plugin and the option when an option is wrong', async () => {
    writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ preset: 'base', logLevel: 'silent', plugins: [['skiff-plugin-c', { label: 3 }]] }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow('plugin "skiff-plugin-c": option "label" must be a string (got 3)');
  });

  it('names a missing preset, a preset cycle and a bad config value', async () => {
    await expect(createCluster({ cwd: dir, config: { preset: 'nosuch' } })).rejects.toThrow('preset "nosuch" not found');
    installPackage('skiff-preset-loop', `export default { name: 'loop', extends: ['loop'], plugins: [] };`);
    await expect(createCluster({ cwd: dir, config: { preset: 'loop' } })).rejects.toThrow('presets extend each other in a cycle: loop → loop');
    writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ port: 'http' }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(`invalid config ${join(dir, 'skiff.config.json')}: "port" must be a number (got "http")`);
  });

  it('refuses unknown config keys and suggests the nearest one', async () => {
    const file = join(dir, 'skiff.config.json');
    writeFileSync(file, JSON.stringify({ preset: 'base', plugin: ['skiff-plugin-c'] }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(
      `invalid config ${file}: unknown key "plugin" (did you mean "plugins"?); known keys: preset, plugins, dataDir, host, port, nodes, advertiseAddress, logLevel, apiServer, trace`,
    );
    writeFileSync(file, JSON.stringify({ preset: 'base', apiServer: { workerstart: 'at-start' } }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(
      `invalid config ${file}: unknown key "apiServer.workerstart" (did you mean "workerStart"?); known keys: workers, workerStart`,
    );
    writeFileSync(file, JSON.stringify({ preset: 'base', apiServer: { workerStart: 'lazy' } }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(`invalid config ${file}: "apiServer.workerStart" must be "on-demand" or "at-start" (got "lazy")`);
    writeFileSync(file, JSON.stringify({ preset: 'base', logLevel: 'verbose' }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(
      `invalid config ${file}: "logLevel" must be one of trace, debug, info, warn, error, fatal, silent (got "verbose")`,
    );
    await expect(createCluster({ cwd: dir, config: { preset: 'base', datadir: 'x' } as never })).rejects.toThrow(
      'invalid config passed to createCluster: unknown key "datadir" (did you mean "dataDir"?)',
    );
    installPackage('skiff-preset-typo', `export default { name: 'typo', plugins: [], config: { node: 2 } };`);
    await expect(createCluster({ cwd: dir, config: { preset: 'typo' } })).rejects.toThrow(
      'invalid config preset typo: unknown key "node" (did you mean "nodes"?)',
    );
  });

  it('refuses to remove a plugin that is not loaded, suggesting the nearest name', async () => {
    const file = join(dir, 'skiff.config.json');
    writeFileSync(file, JSON.stringify({ preset: 'base', logLevel: 'silent', plugins: [['skiff-plugin-aa', false]] }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(
      `invalid config ${file}: cannot remove plugin "skiff-plugin-aa": it is not loaded (did you mean "skiff-plugin-a"?)`,
    );
    writeFileSync(file, JSON.stringify({ preset: 'base', logLevel: 'silent', plugins: [['something-else', false]] }));
    await expect(createCluster({ cwd: dir })).rejects.toThrow(`invalid config ${file}: cannot remove plugin "something-else": it is not loaded`);
  });

  it('loads plugins given by relative path', async () => {
    writeFileSync(join(dir, 'local-plugin.mjs'), pluginSource('local'));
    writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ preset: 'base', logLevel: 'silent', plugins: [['./local-plugin.mjs', { label: 'x' }]] }));
    const kernel = await createCluster({ cwd: dir });
    expect(names(kernel)).toContain('local');
  });

  it('reports an explicit --config file that does not exist', async () => {
    await expect(createCluster({ cwd: dir, configFile: 'missing.mjs' })).rejects.toThrow(`config file not found: ${join(dir, 'missing.mjs')}`);
  });
});
