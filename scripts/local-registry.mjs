#!/usr/bin/env node
// A throw-away npm registry (verdaccio) on 127.0.0.1 with every Skiff package published to it, to try a
// release before it is real (docs/releasing.md). Third-party packages (fastify, lmdb, …) are proxied from
// the registry npm is configured with; @skiff/* and skiff-plugin-* are served only from what is published here.
//
// usage: node scripts/local-registry.mjs [--port N] [--dir DIR] [--prebuilt] [--no-publish]
//   --port N      listen on 127.0.0.1:N (default: a free port)
//   --dir DIR     keep storage, config and npmrc in DIR (default: a new temp dir, removed on exit)
//   --prebuilt    publish the dist/ already built (npm publish --ignore-scripts) instead of running each
//                 package's prepack build
//   --no-publish  only start the registry
// It prints the registry URL and an npmrc to use it with, then serves until Ctrl-C.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { publishablePackages, REPO_ROOT } from './workspace-packages.mjs';
import { freePort } from './free-port.mjs';

const VERDACCIO_BIN = join(REPO_ROOT, 'node_modules/verdaccio/bin/verdaccio');
const USER = { name: 'skiff-local', password: 'skiff-local-password' };

/** Names only ever served from this registry, never fetched from the public one. */
const LOCAL_ONLY = ['@skiff/*', 'skiff-plugin-*', '@*/skiff-plugin-*', 'skiff-preset-*'];

function run(command, args, options = {}) {
  return new Promise((resolve) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024, ...options }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** The registry npm itself uses (so a mirror configured for this machine is honoured as the uplink). */
async function upstreamRegistry() {
  const { stdout } = await run('npm', ['config', 'get', 'registry'], { cwd: REPO_ROOT });
  const url = stdout.trim();
  return /^https?:\/\//.test(url) ? url : 'https://registry.npmjs.org/';
}

function verdaccioConfig(dir, upstream) {
  const local = { access: '$all', publish: '$all', unpublish: '$all' };
  const packages = Object.fromEntries(LOCAL_ONLY.map((pattern) => [pattern, local]));
  packages['@*/*'] = { ...local, proxy: 'upstream' };
  packages['**'] = { ...local, proxy: 'upstream' };
  // JSON is YAML, so verdaccio reads this as its config file.
  return {
    storage: join(dir, 'storage'),
    auth: { htpasswd: { file: join(dir, 'htpasswd'), max_users: 10 } },
    uplinks: { upstream: { url: upstream, timeout: '60s', max_fails: 5 } },
    packages,
    server: { keepAliveTimeout: 60 },
    middlewares: { audit: { enabled: false } },
    web: { enable: false },
    max_body_size: '200mb',
    log: { type: 'stdout', format: 'pretty', level: 'warn' },
  };
}

async function waitForPing(url, child, output, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(new URL('-/ping', url));
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`verdaccio did not answer ${url}-/ping within ${timeoutMs} ms:\n${output()}`);
}

/** Creates the one user (verdaccio answers with a token) so npm publish has credentials to send. */
async function createUser(url) {
  const response = await fetch(new URL(`-/user/org.couchdb.user:${USER.name}`, url), {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      _id: `org.couchdb.user:${USER.name}`,
      name: USER.name,
      password: USER.password,
      type: 'user',
      roles: [],
      date: new Date().toISOString(),
    }),
  });
  const body = await response.json();
  if (!response.ok || !body.token) throw new Error(`verdaccio refused to create a user: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/**
 * Starts verdaccio on 127.0.0.1 and returns its URL, an npmrc file pointing npm at it (with a token that
 * may publish), and stop(). `dir` keeps storage, config and npmrc; by default a temp dir that stop() removes.
 */
export async function startLocalRegistry({ port, dir, upstream } = {}) {
  const ownDir = !dir;
  const root = dir ?? mkdtempSync(join(tmpdir(), 'skiff-registry-'));
  mkdirSync(root, { recursive: true });
  const listenPort = port ?? (await freePort());
  const url = `http://127.0.0.1:${listenPort}/`;
  const configFile = join(root, 'verdaccio.yaml');
  writeFileSync(configFile, JSON.stringify(verdaccioConfig(root, upstream ?? (await upstreamRegistry())), null, 2));

  const child = spawn(process.execPath, [VERDACCIO_BIN, '--config', configFile, '--listen', `127.0.0.1:${listenPort}`], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  child.stderr.on('data', (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  /** Stops verdaccio; removes the temp dir it made unless `keep`. */
  const stop = async ({ keep = false } = {}) => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    if (ownDir && !keep) rmSync(root, { recursive: true, force: true });
  };
  try {
    await waitForPing(url, child, () => log);
    const token = await createUser(url);
    const npmrc = join(root, 'npmrc');
    const hostPath = url.replace(/^http:/, '');
    writeFileSync(npmrc, [`registry=${url}`, `${hostPath}:_authToken=${token}`, 'fund=false', 'audit=false', 'update-notifier=false', ''].join('\n'));
    return { url, npmrc, dir: root, log: () => log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Environment for npm commands against the local registry: its npmrc as the user config (so no other
 * registry or token leaks in) and, unless given, a cache of its own beside it.
 */
export function registryEnv(registry, extra = {}) {
  return {
    ...process.env,
    npm_config_userconfig: registry.npmrc,
    npm_config_registry: registry.url,
    npm_config_cache: join(registry.dir, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  };
}

/** Publishes one package folder to the local registry; an already published version is not an error. */
export async function publishDir(registry, dir, { prebuilt = false } = {}) {
  if (!/^http:\/\/127\.0\.0\.1:\d+\/$/.test(registry.url)) throw new Error(`refusing to publish to ${registry.url}: not a local registry`);
  const args = ['publish', '--registry', registry.url, ...(prebuilt ? ['--ignore-scripts'] : [])];
  const result = await run('npm', args, { cwd: dir, env: registryEnv(registry) });
  if (result.code !== 0 && /EPUBLISHCONFLICT|cannot publish over|previously published/i.test(result.stderr)) return 'exists';
  if (result.code !== 0) throw new Error(`npm publish in ${dir} failed (${result.code}):\n${result.stderr}${result.stdout}`);
  return 'published';
}

/** `npm publish --ignore-scripts -w …` of every package in one npm; false when npm refused any of them. */
async function publishAllAtOnce(registry, packages, log) {
  if (!/^http:\/\/127\.0\.0\.1:\d+\/$/.test(registry.url)) throw new Error(`refusing to publish to ${registry.url}: not a local registry`);
  const started = performance.now();
  const workspaces = packages.flatMap(({ dir }) => ['-w', dir]);
  const result = await run('npm', ['publish', '--registry', registry.url, '--ignore-scripts', ...workspaces], { cwd: REPO_ROOT, env: registryEnv(registry) });
  if (result.code !== 0) return false;
  log(`published ${packages.length} packages with one npm (${((performance.now() - started) / 1000).toFixed(1)}s)`);
  return true;
}

/**
 * Publishes every non-private workspace package. With prepack builds (the default) one at a time in
 * dependency order, as lerna does, since a package's type build reads its dependencies' dist/; with
 * `prebuilt` (dist/ already there) a few at a time.
 */
export async function publishWorkspace(registry, { prebuilt = false, log = () => {} } = {}) {
  const packages = publishablePackages();
  // Prebuilt, one npm publishes them all (-w per package): one npm start instead of one per package, the
  // bulk of the time. Should any be there already (a kept --dir), the one-by-one way below sorts that out.
  if (prebuilt && (await publishAllAtOnce(registry, packages, log))) return packages.map(({ pkg }) => `${pkg.name}@${pkg.version}`);
  const queue = [...packages];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const started = performance.now();
      const outcome = await publishDir(registry, join(REPO_ROOT, next.dir), { prebuilt });
      log(
        `${outcome === 'exists' ? 'already there' : 'published'}: ${next.pkg.name}@${next.pkg.version} (${((performance.now() - started) / 1000).toFixed(1)}s)`,
      );
    }
  };
  await Promise.all(Array.from({ length: prebuilt ? 4 : 1 }, worker));
  return packages.map(({ pkg }) => `${pkg.name}@${pkg.version}`);
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      dir: { type: 'string' },
      prebuilt: { type: 'boolean', default: false },
      'no-publish': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node scripts/local-registry.mjs [--port N] [--dir DIR] [--prebuilt] [--no-publish]');
    return;
  }
  const registry = await startLocalRegistry({ port: values.port ? Number(values.port) : undefined, dir: values.dir });
  const stop = () => registry.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`registry: ${registry.url} (storage ${registry.dir})`);
  if (!values['no-publish']) {
    const started = performance.now();
    try {
      const published = await publishWorkspace(registry, { prebuilt: values.prebuilt, log: (line) => console.log(`  ${line}`) });
      console.log(`published ${published.length} packages in ${((performance.now() - started) / 1000).toFixed(1)}s`);
    } catch (err) {
      console.error(err.message);
      await registry.stop();
      process.exit(1);
    }
  }
  console.log(`try it:  npm install --registry ${registry.url} --engine-strict @skiff/cli @skiff/preset-dev`);
  console.log(`publish: npm publish --userconfig ${registry.npmrc}`);
  console.log('Ctrl-C stops the registry' + (values.dir ? '' : ' and removes its storage'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`local-registry: ${err.message}`);
    process.exit(1);
  });
}
