// The workspace packages Skiff publishes, read from the root package.json, in dependency order.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where every published package.json points: change it here, then run `node scripts/check-publish.mjs`. */
export const REPOSITORY_URL = 'git+https://github.com/skiff-k8s/skiff.git';

/**
 * Every workspace package (`dir` relative to the repository root, the parsed package.json), private ones
 * included, in an order where a package comes after the workspace packages it depends on.
 */
export function workspacePackages(root = REPO_ROOT) {
  const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const found = [];
  for (const pattern of workspaces) {
    const dirs = pattern.endsWith('/*')
      ? readdirSync(join(root, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => `${pattern.slice(0, -2)}/${entry.name}`)
      : [pattern];
    for (const dir of dirs.sort()) {
      const file = join(root, dir, 'package.json');
      if (existsSync(file)) found.push({ dir, pkg: JSON.parse(readFileSync(file, 'utf8')) });
    }
  }
  return dependencyOrder(found);
}

/** The packages `lerna publish` would publish: every workspace package that is not private. */
export function publishablePackages(root = REPO_ROOT) {
  return workspacePackages(root).filter(({ pkg }) => !pkg.private);
}

/**
 * What a package needs built before its own build: dependencies and required peers. devDependencies and
 * optional peers only serve its tests (@skiff/testing ↔ the dev preset would otherwise be a cycle).
 */
function buildDependencies(pkg, names) {
  const optionalPeers = new Set(
    Object.entries(pkg.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta.optional)
      .map(([name]) => name),
  );
  const needed = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {}).filter((name) => !optionalPeers.has(name))];
  return needed.filter((name) => names.has(name) && name !== pkg.name);
}

/** Depth-first topological order; a cycle would be broken where it is met. */
function dependencyOrder(packages) {
  const byName = new Map(packages.map((entry) => [entry.pkg.name, entry]));
  const names = new Set(byName.keys());
  const ordered = [];
  const state = new Map();
  const visit = (entry) => {
    if (state.has(entry.pkg.name)) return;
    state.set(entry.pkg.name, 'visiting');
    for (const dependency of buildDependencies(entry.pkg, names)) visit(byName.get(dependency));
    state.set(entry.pkg.name, 'done');
    ordered.push(entry);
  };
  for (const entry of packages) visit(entry);
  return ordered;
}
