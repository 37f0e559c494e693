#!/usr/bin/env node
// The `version` lifecycle script of `lerna version` (root package.json), run after lerna has written the new
// versions and before it updates package-lock.json. Lerna moves the ranges that the packages it versions give
// for their siblings in dependencies and devDependencies, but not in peerDependencies, and not in package.json
// files it does not version (integration-tests, its fixture plugins). Left alone, every plugin would go on
// asking for the previous @skiff/kernel, its `kernel` range (read from there by packageInfo) would refuse the
// new kernel, and npm would look for the old versions on the registry. This sets every range any package.json
// in the repository gives for a workspace package to ^<its version>, the range scripts/check-publish.mjs
// expects, and stages the files it changed so lerna's release commit takes them.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, workspacePackages } from './workspace-packages.mjs';

const versions = new Map(workspacePackages().map(({ pkg }) => [pkg.name, pkg.version]));
const files = execFileSync('git', ['ls-files', '--', '*package.json'], { cwd: REPO_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
const changed = [];
for (const file of files) {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, file), 'utf8'));
  let touched = false;
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies']) {
    for (const name of Object.keys(pkg[field] ?? {})) {
      const version = versions.get(name);
      if (version === undefined || pkg[field][name] === `^${version}`) continue;
      pkg[field][name] = `^${version}`;
      touched = true;
    }
  }
  if (!touched) continue;
  writeFileSync(join(REPO_ROOT, file), `${JSON.stringify(pkg, null, 2)}\n`);
  changed.push(file);
}
if (changed.length > 0) execFileSync('git', ['add', '--', ...changed], { cwd: REPO_ROOT });
console.log(`ranges on workspace packages: ${changed.length} package.json file(s) updated`);
