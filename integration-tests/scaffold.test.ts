import { workspacePackages } from '../scripts/workspace-packages.mjs';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kubectl, REPO_ROOT, tempDir } from './harness.js';

/**
 * The plugin author's path, outside the monorepo: the CLI and the Skiff packages a new plugin needs are
 * packed as npm would publish them, installed into a folder under the system temp dir, and `skiff new`
 * from that install writes each kind of plugin, which must then install, build, type-check and pass its
 * own tests as written. The admission plugin then goes the publishing way: `npm pack`, installed next
 * to a cluster config, enforced by `skiff up` for the real kubectl.
 *
 * Nothing comes from the monorepo's node_modules: @skiff/* resolve to the packed tarballs (an install-time
 * override stands in for the registry), everything else to the npm registry through the local cache.
 */

interface Workspace {
  dir: string;
  manifest: { name: string; dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
}

/** Every workspace package by name (the scripts' one reading of the root package.json's workspaces). */
function workspaces(): Map<string, Workspace> {
  return new Map(workspacePackages().map(({ dir, pkg }) => [pkg.name, { dir, manifest: pkg }]));
}

/** `roots` and the workspace packages they depend on (dependencies and peer dependencies), transitively. */
function closure(roots: string[], all: Map<string, Workspace>): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    const workspace = all.get(name);
    if (!workspace || seen.has(name)) return;
    seen.add(name);
    for (const dep of Object.keys({ ...workspace.manifest.dependencies, ...workspace.manifest.peerDependencies })) visit(dep);
  };
  roots.forEach(visit);
  return [...seen].sort();
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, timeoutMs = 150_000): Promise<Run> {
  return new Promise((resolveRun) => {
    // Plain output, and no tool waiting on a terminal.
    const { FORCE_COLOR: _color, ...env } = process.env;
    const child = spawn(command, args, {
      cwd,
      env: { ...env, CI: '1', NO_COLOR: '1', npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

/** Runs and answers its stdout; fails the test with the command's own output when it exits non-zero. */
async function ok(command: string, args: string[], cwd: string): Promise<string> {
  const started = Date.now();
  const result = await run(command, args, cwd);
  const words = [command === process.execPath ? 'node' : command, ...args.map((arg) => arg.replace(root, '$TMP'))].join(' ');
  const shown = words.length > 120 ? `${words.slice(0, 117)}…` : words;
  timings.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s  ${shown}  (in ${cwd.replace(root, '$TMP')})`);
  if (result.code !== 0) throw new Error(`${words} (in ${cwd}) exited ${result.code}\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** `npm pack --json`'s report; lifecycle scripts (prepack) may print before it. */
function packJson(stdout: string): { name: string; filename: string; files: { path: string }[] }[] {
  const start = /^\[$/m.exec(stdout)?.index;
  if (start === undefined) throw new Error(`no JSON report from npm pack:\n${stdout}`);
  return JSON.parse(stdout.slice(start));
}

const INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund'];

/** Points every @skiff/* package at its tarball: the direct dependencies, and through overrides the ones below them. */
function useTarballs(projectDir: string, sections: ('dependencies' | 'devDependencies')[]): void {
  const file = join(projectDir, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  for (const section of sections) {
    for (const name of Object.keys(manifest[section] ?? {})) {
      if (!name.startsWith('@skiff/')) continue;
      if (!tarballs.has(name)) throw new Error(`${file} needs ${name}, which was not packed`);
      manifest[section][name] = tarballs.get(name);
    }
  }
  manifest.overrides = Object.fromEntries(tarballs);
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

const NEEDED = ['@skiff/kernel', '@skiff/api', '@skiff/testing', '@skiff/preset-dev'];
const KINDS = ['admission', 'scheduler', 'authenticator', 'authorizer', 'controller'];

const timings: string[] = [];
let root = '';
/** Package name → `file:/…/name-version.tgz`. */
const tarballs = new Map<string, string>();
let cliDir = '';
let skiff = '';

beforeAll(async () => {
  root = tempDir('scaffold');
  const all = workspaces();
  const packages = closure(['@skiff/cli', ...NEEDED], all);
  for (const name of packages) {
    const { dir } = all.get(name)!;
    if (!existsSync(join(REPO_ROOT, dir, 'dist/index.js'))) throw new Error(`${name} is not built (no ${dir}/dist): run \`npm run build\` first`);
  }
  // --ignore-scripts: pack what is built, without each package's prepack build.
  const packed = packJson(
    await ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', root, ...packages.flatMap((name) => ['-w', all.get(name)!.dir])], REPO_ROOT),
  );
  for (const { name, filename } of packed) tarballs.set(name, `file:${join(root, filename)}`);

  // A user's folder with the CLI installed from its tarball, as `npm install @skiff/cli` would.
  cliDir = join(root, 'cluster');
  mkdirSync(cliDir);
  writeFileSync(
    join(cliDir, 'package.json'),
    `${JSON.stringify({ name: 'my-cluster', private: true, type: 'module', dependencies: { '@skiff/cli': '*' } }, null, 2)}\n`,
  );
  useTarballs(cliDir, ['dependencies']);
  await ok('npm', INSTALL, cliDir);
  skiff = join(cliDir, 'node_modules/.bin/skiff');
}, 180_000);

afterAll(() => {
  if (timings.length) console.log(`scaffold timings:\n  ${timings.join('\n  ')}`);
  if (root && !process.env.SKIFF_KEEP_SCAFFOLD) rmSync(root, { recursive: true, force: true });
});

describe('skiff new, outside the monorepo', () => {
  it('packs the CLI with its templates', () => {
    expect(existsSync(join(cliDir, 'node_modules/.bin/skiff'))).toBe(true);
    const installed = readdirSync(join(root, 'cluster/node_modules/@skiff'));
    expect(installed).toEqual(expect.arrayContaining(['kernel', 'preset-dev']));
  });

  for (const kind of KINDS) {
    it(`writes ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} plugin that installs, builds, type-checks and passes its tests as written`, async () => {
      const projects = join(root, 'projects');
      const created = await ok(process.execPath, [skiff, 'new', kind, `my-${kind}`, '--dir', projects], root);
      expect(created).toContain(`created projects/skiff-plugin-my-${kind}/`);
      const dir = join(projects, `skiff-plugin-my-${kind}`);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(
        Object.keys(manifest.devDependencies)
          .filter((name) => name.startsWith('@skiff/'))
          .sort(),
      ).toEqual([...NEEDED].sort());

      useTarballs(dir, ['devDependencies']);
      await ok('npm', INSTALL, dir);
      await ok('npm', ['run', 'build'], dir);
      expect(readdirSync(join(dir, 'dist')).sort()).toEqual(expect.arrayContaining(['index.d.ts', 'index.js']));
      await ok('npm', ['run', 'typecheck'], dir);
      const tested = await ok('npm', ['test'], dir);
      expect(tested).toMatch(/Tests\s+\d+ passed/);
      expect(tested).not.toMatch(/\d+ (failed|skipped)/);
    }, 180_000);
  }

  it('packs the admission plugin for npm and a cluster enforces it once installed and named in the config', async () => {
    const dir = join(root, 'projects/skiff-plugin-my-admission');
    // `npm pack` makes what `npm publish` uploads; its prepack script builds dist again from nothing.
    rmSync(join(dir, 'dist'), { recursive: true, force: true });
    const [packed] = packJson(await ok('npm', ['pack', '--json', '--pack-destination', root], dir));
    expect(packed!.files.map((f) => f.path).sort()).toEqual(['README.md', 'dist/index.d.ts', 'dist/index.js', 'package.json']);

    await ok('npm', [...INSTALL, join(root, packed!.filename)], cliDir);
    writeFileSync(
      join(cliDir, 'skiff.config.mjs'),
      `export default { plugins: [['skiff-plugin-my-admission', { label: 'team', message: 'every pod needs a team' }]] };\n`,
    );
    const cluster = await startSkiffIn(cliDir);
    const kubectl = new Kubectl(cluster.kubeconfig);
    try {
      const denied = await kubectl.run(['run', 'web', '--image=nginx:1.27']);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain('Error from server (Forbidden): pods "web" is forbidden: every pod needs a team');
      await kubectl.ok('run', 'labelled', '--image=nginx:1.27', '--labels=team=payments');
    } finally {
      kubectl.cleanup();
      expect(await cluster.stop()).toBe(0);
    }
  }, 120_000);
});

/** Starts the installed CLI's `skiff up` in `cwd` on a free port and waits for its kubeconfig and ready lines. */
async function startSkiffIn(cwd: string): Promise<{ kubeconfig: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [skiff, 'up', '--port', '0', '--log-level', 'warn'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const kubeconfig = await new Promise<string>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`skiff up not ready after 30 s:\n${out}`)), 30_000);
    const check = () => {
      const path = /^kubeconfig: (\S+)/m.exec(out)?.[1];
      if (path && /^ready: /m.test(out)) {
        clearTimeout(timer);
        resolveReady(path);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`skiff up exited with ${code}:\n${out}`));
    });
  });
  return {
    kubeconfig,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}
