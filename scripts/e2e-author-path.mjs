#!/usr/bin/env node
// The plugin author's path, end to end, as a person outside this repository walks it:
//   1. every Skiff package is published to a throw-away local registry (each package's prepack builds it);
//   2. in an empty folder outside the repo, `npm install --engine-strict @skiff/cli @skiff/preset-dev`
//      from that registry, and every installed package accepts Node 20.19;
//   3. `npx @skiff/cli up` in an empty folder (kubectl sees its node), `npx @skiff/cli version`, and a global install;
//   4. two plugins written as docs/publishing-your-plugin.md says (with `skiff new` when the CLI has it):
//      an admission plugin rejecting :latest images and a scheduler score plugin preferring a node label;
//      each is installed, tested, packed, published to the local registry;
//   5. they are installed into the cluster folder and enabled with one config line each; `skiff up
//      --nodes 3`; the real kubectl prints the admission plugin's message, and pods land where the label is.
//
// usage: node scripts/e2e-author-path.mjs [--prebuilt] [--by-hand] [--keep]
//   --prebuilt  publish the dist/ already built instead of running each package's prepack build
//   --by-hand   write the plugin packages from the guide's files instead of `skiff new`
//   --keep      keep the temp folders and the registry's storage (their paths are printed at the end)
// The reduced form CI runs is integration-tests/publish.test.ts (steps 1–2 and a cluster from the install).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkPackages } from './check-publish.mjs';
import { publishDir, publishWorkspace, registryEnv, startLocalRegistry } from './local-registry.mjs';
import { REPO_ROOT } from './workspace-packages.mjs';

export const NODE_FLOOR = '20.19.0';
const GUIDE = join(REPO_ROOT, 'docs/publishing-your-plugin.md');
export const ADMISSION_MESSAGE = 'pin a version instead of :latest';
export const PREFERRED_LABEL = { label: 'example.com/tier', value: 'fast', weight: 10 };

/** Runs a command; never rejects. `env` defaults to the local registry's npm environment when given one. */
export function run(command, args, { cwd, env, timeoutMs = 600_000 } = {}) {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function must(what, promise) {
  const result = await promise;
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stderr}${result.stdout}`);
  return result;
}

/** An empty folder outside the repository (the OS temp dir), the way a user's project starts. */
export function emptyFolder(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `skiff-${prefix}-`));
  if (dir.startsWith(REPO_ROOT)) throw new Error(`temp dir ${dir} is inside the repository`);
  return dir;
}

/** `npm install --engine-strict <packages>` from the local registry into `dir` (a package.json is made first). */
export async function installFromRegistry(registry, dir, packages) {
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'my-cluster', private: true }, null, 2) + '\n');
  return must(`npm install ${packages.join(' ')}`, run('npm', ['install', '--engine-strict', ...packages], { cwd: dir, env: registryEnv(registry) }));
}

/** Installed packages whose engines.node does not admit `floor` (what `--engine-strict` on that Node would refuse). */
export function enginesProblems(dir, floor = NODE_FLOOR) {
  const semver = createRequire(join(REPO_ROOT, 'package.json'))('semver');
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
  const problems = [];
  for (const path of Object.keys(lock.packages)) {
    const file = join(dir, path, 'package.json');
    if (!path || !existsSync(file)) continue; // optional packages for other platforms are not installed
    const { name, version, engines } = JSON.parse(readFileSync(file, 'utf8'));
    if (engines?.node && !semver.satisfies(floor, engines.node)) problems.push(`${name}@${version} needs node ${engines.node}`);
  }
  return problems;
}

/**
 * Starts `skiff up` in `dir` and waits for its ready line: the `skiff` bin installed there, or `command`
 * (e.g. `['npx', '--yes', '@skiff/cli']`) with `env`.
 */
export function startInstalledSkiff(dir, args, { timeoutMs = 60_000, command, env } = {}) {
  const [file, ...prefix] = command ?? [process.execPath, join(dir, 'node_modules/.bin/skiff')];
  // Its own process group, so stop() is a terminal's Ctrl-C: SIGINT to every process in it (npx does not
  // pass a signal it gets alone on to skiff).
  const child = spawn(file, [...prefix, 'up', '--port', '0', '--log-level', 'warn', ...args], {
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      // the group is gone already
    }
  };
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  // 'close' comes once every process holding the output pipes has ended: under npx, skiff too.
  const exited = new Promise((resolve) => child.once('close', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) signal('SIGINT');
    const timer = setTimeout(() => signal('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal('SIGKILL');
      reject(new Error(`skiff up not ready after ${timeoutMs} ms\n${out}${err}`));
    }, timeoutMs);
    const check = () => {
      const server = /^ready: (https:\/\/\S+)/m.exec(out)?.[1];
      const kubeconfig = /^kubeconfig: (\S+)/m.exec(out)?.[1];
      if (!server || !kubeconfig) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve({ server, kubeconfig, stop, output: () => out + err });
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`skiff up exited with ${code}\n${out}${err}`));
    });
  });
}

/** The real kubectl on PATH against a kubeconfig, with a cache dir of its own. */
export function kubectl(kubeconfig, cacheDir) {
  return (...args) => run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { timeoutMs: 60_000 });
}

async function until(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await check();
    if (last.done) return last.value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${last.detail ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The files docs/publishing-your-plugin.md shows, by path: each is a bold `path` line and the code block under it. */
export function guideFiles(markdown = readFileSync(GUIDE, 'utf8')) {
  const files = new Map();
  for (const match of markdown.matchAll(/^\*\*`([^`]+)`\*\*\n+```[a-z]*\n([\s\S]*?)\n```/gm)) files.set(match[1], `${match[2]}\n`);
  return files;
}

function writeFiles(root, files) {
  for (const [path, text] of files) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** Whether the installed CLI has `skiff new` (another part of the author's path; the guide says what to do without it). */
async function cliHasNew(appDir) {
  const result = await run(process.execPath, [join(appDir, 'node_modules/.bin/skiff'), 'new', '--help'], { cwd: appDir });
  return result.code === 0;
}

/**
 * Makes the plugin package `skiff-plugin-<name>` under `workDir` the way the guide says: `skiff new <kind>
 * <name>` when the CLI has it, then the guide's source for `replaceSource` plugins; otherwise the guide's
 * files by hand (a plugin the guide shows only a source for takes the admission example's package.json
 * and tsconfig.json with its own name and keywords). Returns the package folder.
 */
export async function makePlugin({ registry, appDir, workDir, kind, name, area, description, replaceSource, useNew }) {
  const packageName = `skiff-plugin-${name}`;
  const guide = guideFiles();
  const own = new Map([...guide].filter(([path]) => path.startsWith(`${packageName}/`)).map(([path, text]) => [path.slice(packageName.length + 1), text]));
  let dir;
  if (useNew) {
    const scratch = join(workDir, `new-${name}`);
    mkdirSync(scratch);
    await must(
      `skiff new ${kind} ${name}`,
      run(process.execPath, [join(appDir, 'node_modules/.bin/skiff'), 'new', kind, name], { cwd: scratch, env: registryEnv(registry) }),
    );
    dir = existsSync(join(scratch, 'package.json'))
      ? scratch
      : join(scratch, readdirSync(scratch).find((entry) => existsSync(join(scratch, entry, 'package.json'))) ?? '');
    if (!existsSync(join(dir, 'package.json'))) throw new Error(`skiff new ${kind} ${name} made no package in ${scratch}`);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (pkg.name !== packageName) throw new Error(`skiff new ${kind} ${name} named the package ${pkg.name}, expected ${packageName}`);
    if (replaceSource) {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, description }, null, 2) + '\n');
      rmSync(join(dir, 'src'), { recursive: true, force: true });
      writeFiles(
        dir,
        [...own].filter(([path]) => path.startsWith('src/')),
      );
    }
  } else {
    dir = join(workDir, packageName);
    const base = guide.get('skiff-plugin-no-latest/package.json');
    const pkg = JSON.parse(own.get('package.json') ?? base);
    Object.assign(pkg, { name: packageName, description, keywords: ['skiff-plugin', `skiff-${area}`] });
    const files = new Map(own);
    files.set('package.json', JSON.stringify(pkg, null, 2) + '\n');
    if (!files.has('tsconfig.json')) files.set('tsconfig.json', guide.get('skiff-plugin-no-latest/tsconfig.json'));
    writeFiles(dir, files);
  }
  return dir;
}

/** npm install, npm test, npm publish (prepack builds) in a plugin package, against the local registry. */
export async function testAndPublish(registry, dir) {
  const env = registryEnv(registry);
  await must(`npm install in ${dir}`, run('npm', ['install', '--engine-strict'], { cwd: dir, env }));
  await must(`npm test in ${dir}`, run('npm', ['test'], { cwd: dir, env }));
  await publishDir(registry, dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  // What the registry now serves: the tarball must hold the build, which only prepack made.
  const packed = await must(`npm pack ${pkg.name}`, run('npm', ['pack', `${pkg.name}@${pkg.version}`, '--dry-run', '--json'], { cwd: dir, env }));
  const files = JSON.parse(packed.stdout)[0].files.map((file) => file.path);
  if (!files.includes('dist/index.js')) throw new Error(`${pkg.name}@${pkg.version} as published has no dist/index.js: ${files.join(', ')}`);
  return { name: pkg.name, files: files.length, warnings: dangling(dir, files) };
}

/** Source maps in the tarball that name files it does not hold (the guide's checklist says: none). */
function dangling(dir, files) {
  const shipped = new Set(files);
  return files
    .filter((file) => file.endsWith('.map'))
    .flatMap((file) =>
      (JSON.parse(readFileSync(join(dir, file), 'utf8')).sources ?? [])
        .filter((source) => !shipped.has(posix.normalize(posix.join(posix.dirname(file), source))))
        .map((source) => `${file} names ${source}, which is not in the tarball`),
    );
}

async function main() {
  const { values } = parseArgs({
    options: { prebuilt: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false }, 'by-hand': { type: 'boolean', default: false } },
  });
  const started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
  const step = (line) => console.log(`[${seconds()}] ${line}`);
  const folders = [];
  const folder = (prefix) => {
    const dir = emptyFolder(prefix);
    folders.push(dir);
    return dir;
  };
  let registry;
  let cluster;
  try {
    // What the tarballs hold is checked on a built tree: before publishing what is already built, after
    // publishing when each package's prepack has just built it.
    const check = () => {
      const problems = checkPackages();
      if (problems.length) throw new Error(`check-publish:\n${problems.join('\n')}`);
      step('check-publish: every package ready');
    };
    if (values.prebuilt) check();
    registry = await startLocalRegistry();
    step(`registry ${registry.url}`);
    const published = await publishWorkspace(registry, { prebuilt: values.prebuilt });
    step(`published ${published.length} packages${values.prebuilt ? ' (prebuilt)' : ' (prepack builds)'}`);
    if (!values.prebuilt) check();

    const appDir = folder('e2e-cluster');
    await installFromRegistry(registry, appDir, ['@skiff/cli', '@skiff/preset-dev']);
    const engines = enginesProblems(appDir);
    if (engines.length) throw new Error(`installed packages that refuse Node ${NODE_FLOOR}:\n${engines.join('\n')}`);
    step(`installed @skiff/cli @skiff/preset-dev --engine-strict in ${appDir}; every package accepts Node ${NODE_FLOOR}`);

    const npxDir = folder('e2e-npx');
    const npx = await must('npx @skiff/cli version', run('npx', ['--yes', '@skiff/cli', 'version'], { cwd: npxDir, env: registryEnv(registry) }));
    const npxCluster = await startInstalledSkiff(npxDir, ['--data-dir', join(npxDir, 'data')], {
      command: ['npx', '--yes', '@skiff/cli'],
      env: registryEnv(registry),
    });
    const npxNodes = await must('kubectl get nodes (npx cluster)', kubectl(npxCluster.kubeconfig, join(npxDir, 'kubectl-cache'))('get', 'nodes', '-o', 'name'));
    if (npxNodes.stdout.trim() !== 'node/node-1') throw new Error(`npx @skiff/cli up: kubectl get nodes printed ${npxNodes.stdout}`);
    await npxCluster.stop(); // npm exec ends by the SIGINT itself; what counts is that skiff stopped cleanly
    if (!/^skiff: stopped$/m.test(npxCluster.output())) throw new Error(`npx @skiff/cli up did not stop cleanly on Ctrl-C:\n${npxCluster.output()}`);
    step('npx @skiff/cli up in an empty folder: kubectl get nodes → node/node-1; Ctrl-C stops it');
    const globalPrefix = folder('e2e-global');
    await must(
      'npm install --global @skiff/cli',
      run('npm', ['install', '--global', '--engine-strict', '--prefix', globalPrefix, '@skiff/cli'], { env: registryEnv(registry) }),
    );
    const globalVersion = await must('skiff version (global)', run(join(globalPrefix, 'bin/skiff'), ['version']));
    step(`npx @skiff/cli version → ${npx.stdout.trim()}; global install → ${globalVersion.stdout.trim()}`);

    const useNew = !values['by-hand'] && (await cliHasNew(appDir));
    step(useNew ? 'scaffolding with skiff new' : 'writing the plugin packages by hand, from docs/publishing-your-plugin.md');
    const workDir = folder('e2e-plugins');
    const admissionDir = await makePlugin({
      registry,
      appDir,
      workDir,
      useNew,
      kind: 'admission',
      name: 'no-latest',
      area: 'admission',
      replaceSource: true,
      description: 'Skiff admission plugin: rejects pods whose images use the :latest tag',
    });
    const schedulerDir = await makePlugin({
      registry,
      appDir,
      workDir,
      useNew,
      kind: 'scheduler',
      name: 'prefer-label',
      area: 'scheduler',
      replaceSource: false,
      description: 'Skiff scheduler plugin: prefers nodes that carry a label',
    });
    for (const dir of [admissionDir, schedulerDir]) {
      const { name, files, warnings } = await testAndPublish(registry, dir);
      step(`${name}: npm install, npm test, npm publish (${files} files in the tarball)`);
      for (const warning of warnings) step(`warning: ${name}: ${warning}`);
    }

    await installFromRegistry(registry, appDir, ['skiff-plugin-no-latest', 'skiff-plugin-prefer-label']);
    writeFileSync(
      join(appDir, 'skiff.config.mjs'),
      `export default {\n  plugins: [\n    'skiff-plugin-no-latest',\n    ['skiff-plugin-prefer-label', ${JSON.stringify(PREFERRED_LABEL).replace(/"(\w+)":/g, '$1: ')}],\n  ],\n};\n`,
    );
    step('installed both plugins into the cluster folder; skiff.config.mjs names them');

    cluster = await startInstalledSkiff(appDir, ['--nodes', '3', '--data-dir', join(appDir, 'data')]);
    const k = kubectl(cluster.kubeconfig, join(appDir, 'kubectl-cache'));
    step(`skiff up --nodes 3: ${cluster.server}`);

    const rejected = await k('run', 'bad', '--image=nginx:latest');
    const expected = `Error from server (Forbidden): pods "bad" is forbidden: container "bad" uses image "nginx:latest": ${ADMISSION_MESSAGE}`;
    if (rejected.code === 0 || rejected.stderr.trim() !== expected)
      throw new Error(`kubectl run --image=nginx:latest: expected\n  ${expected}\ngot (exit ${rejected.code})\n  ${rejected.stderr.trim()}${rejected.stdout}`);
    step(`kubectl run bad --image=nginx:latest → ${rejected.stderr.trim()}`);
    await must('kubectl run good --image=nginx:1.27', k('run', 'good', '--image=nginx:1.27'));
    step('kubectl run good --image=nginx:1.27 → pod/good created');

    const { label, value } = PREFERRED_LABEL;
    const placements = async (selector, count) =>
      until(`${count} ${selector} pods scheduled`, async () => {
        const result = await k('get', 'pods', '-l', selector, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.nodeName}{"\\n"}{end}');
        const lines = result.stdout.trim().split('\n').filter(Boolean);
        const nodes = lines.map((line) => line.split('=')[1]);
        return { done: lines.length === count && nodes.every(Boolean), value: lines.map((line) => line.split('=')), detail: result.stdout + result.stderr };
      });
    await must('kubectl label node-2', k('label', 'node', 'node-2', `${label}=${value}`));
    await must('kubectl create deployment', k('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=4'));
    const first = await placements('app=web', 4);
    const off = first.filter(([, node]) => node !== 'node-2');
    if (off.length) throw new Error(`with ${label}=${value} on node-2, pods went elsewhere: ${first.map((p) => p.join(' → ')).join(', ')}`);
    step(`label on node-2: ${first.map(([, node]) => node).join(', ')}`);

    await must('move the label', k('label', 'node', 'node-2', `${label}-`));
    await must('move the label', k('label', 'node', 'node-3', `${label}=${value}`));
    const before = new Set(first.map(([pod]) => pod));
    await must('kubectl scale', k('scale', 'deployment', 'web', '--replicas=8'));
    const second = (await placements('app=web', 8)).filter(([pod]) => !before.has(pod));
    if (second.some(([, node]) => node !== 'node-3'))
      throw new Error(`with the label moved to node-3, new pods went: ${second.map((p) => p.join(' → ')).join(', ')}`);
    step(`label moved to node-3: the 4 new pods → ${second.map(([, node]) => node).join(', ')}`);

    const wide = await k('get', 'pods', '-o', 'wide');
    console.log(wide.stdout.trimEnd());
    console.log(`e2e-author-path: passed in ${seconds()}`);
  } catch (err) {
    console.error(`e2e-author-path: FAILED after ${seconds()}\n${err.message}`);
    if (cluster) console.error(cluster.output().split('\n').slice(-30).join('\n'));
    process.exitCode = 1;
  } finally {
    await cluster?.stop();
    if (values.keep) {
      await registry?.stop({ keep: true });
      console.log(`kept: ${[...folders, registry?.dir].filter(Boolean).join(' ')}`);
    } else {
      await registry?.stop();
      for (const dir of folders) rmSync(dir, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
