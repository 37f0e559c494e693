#!/usr/bin/env node
// Checks every publishable package before a release (docs/releasing.md): names we own, public access,
// LICENSE, README, prepack build, engines, repository, and that every file package.json, exports and the
// source maps point at is in the tarball. Reads what `npm pack --dry-run` would ship, so build first.
// usage: node scripts/check-publish.mjs     (exit 1 and one line per problem when something is wrong)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishablePackages, REPO_ROOT, REPOSITORY_URL, workspacePackages } from './workspace-packages.mjs';

const NODE_FLOOR = '20.19.0';
const OWN_SCOPE = '@skiff/';

/** Every path an `exports` map points at, whatever the condition. */
function exportTargets(exportsField) {
  if (typeof exportsField === 'string') return [exportsField];
  if (exportsField === null || typeof exportsField !== 'object') return [];
  return Object.values(exportsField).flatMap(exportTargets);
}

const normal = (path) => posix.normalize(path.replace(/^\.\//, ''));

/** The files `npm pack` puts in each package's tarball, by package name (one npm call for all). */
export function packedFiles(packages, root = REPO_ROOT) {
  const args = ['pack', '--dry-run', '--json', '--ignore-scripts', ...packages.flatMap(({ dir }) => ['-w', dir])];
  const out = execFileSync('npm', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  return new Map(JSON.parse(out).map((entry) => [entry.name, new Set(entry.files.map((file) => file.path))]));
}

/** Problems that would make a published package broken or not ours; empty when all is well. */
export function checkPackages(root = REPO_ROOT) {
  const problems = [];
  const packages = publishablePackages(root);
  const versions = new Map(packages.map(({ pkg }) => [pkg.name, pkg.version]));
  const license = readFileSync(join(root, 'LICENSE'), 'utf8');
  const files = packedFiles(packages, root);

  for (const { pkg, dir } of workspacePackages(root)) {
    if (dir.startsWith('docs/examples/') && pkg.private !== true) problems.push(`${dir}: examples are never published; set "private": true`);
  }
  for (const { dir, pkg } of packages) {
    const say = (message) => problems.push(`${pkg.name} (${dir}): ${message}`);
    const shipped = files.get(pkg.name) ?? new Set();
    if (!pkg.name.startsWith(OWN_SCOPE)) say(`publishes under a name that is not ours; use ${OWN_SCOPE}…`);
    if (pkg.publishConfig?.access !== 'public') say('needs publishConfig.access "public" (a scoped package is private by default)');
    if (pkg.publishConfig?.registry) say('publishConfig.registry overrides --registry; keep the registry in lerna.json');
    if (pkg.license !== 'Apache-2.0') say(`license is ${pkg.license}, expected Apache-2.0`);
    if (!shipped.has('LICENSE')) say('no LICENSE in the tarball');
    else if (readFileSync(join(root, dir, 'LICENSE'), 'utf8') !== license) say('LICENSE differs from the root LICENSE');
    if (!shipped.has('README.md')) say('no README.md in the tarball');
    if (pkg.scripts?.prepack !== 'npm run build' || !pkg.scripts?.build) say('needs "prepack": "npm run build" (and a build script)');
    if (!pkg.engines?.node || !satisfiesFloor(pkg.engines.node)) say(`engines.node "${pkg.engines?.node}" must accept Node ${NODE_FLOOR}`);
    if (pkg.repository?.url !== REPOSITORY_URL || pkg.repository?.directory !== dir)
      say(`repository must be { url: "${REPOSITORY_URL}", directory: "${dir}" }`);
    for (const field of ['dependencies', 'peerDependencies']) {
      for (const [name, range] of Object.entries(pkg[field] ?? {})) {
        if (versions.has(name) && range !== `^${versions.get(name)}`) say(`${field} ${name}@${range}, expected ^${versions.get(name)}`);
      }
    }

    const targets = [...exportTargets(pkg.exports), pkg.main, pkg.types, ...Object.values(pkg.bin ?? {})].filter(Boolean);
    for (const target of new Set(targets.map(normal))) if (!shipped.has(target)) say(`points at ${target}, which is not in the tarball`);
    for (const file of shipped) {
      if (/^src\/(.*\/)?(.*\.test\.ts|test-support(\/.*|\.ts))$/.test(file)) say(`ships test code: ${file}`);
      if (!file.endsWith('.map')) continue;
      const map = JSON.parse(readFileSync(join(root, dir, file), 'utf8'));
      for (const source of map.sources ?? []) {
        const resolved = posix.normalize(posix.join(posix.dirname(file), source));
        if (!shipped.has(resolved)) say(`${file} names ${source}, which is not in the tarball`);
      }
    }
  }
  return problems;
}

/** True when the engines range admits the oldest Node we support. */
function satisfiesFloor(range) {
  return createRequire(import.meta.url)('semver').satisfies(NODE_FLOOR, range);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = checkPackages();
  for (const problem of problems) console.error(problem);
  const count = publishablePackages().length;
  console.log(problems.length ? `check-publish: ${problems.length} problem(s) in ${count} packages` : `check-publish: ${count} packages ready to publish`);
  process.exitCode = problems.length ? 1 : 0;
}
