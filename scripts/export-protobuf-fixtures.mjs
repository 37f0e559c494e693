#!/usr/bin/env node
// Upstream's own protobuf fixtures (k8s.io/api testdata/HEAD/<group>.<version>.<Kind>.pb, beside the same
// object as .json) for the kinds Skiff serves. Two uses:
//
//   node scripts/export-protobuf-fixtures.mjs --api <git dir> [--tag v0.36.3]
//       writes the representative set below into core/api/test-data/protobuf/ (committed; protobuf.fixtures.test.ts
//       decodes each and compares it with its .json twin);
//   node scripts/export-protobuf-fixtures.mjs --api <git dir> --check-all
//       decodes the fixture of every served kind with the built @skiff/api (npm run build first) and prints
//       which match their .json twin.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'core/api/test-data/protobuf');
const REPRESENTATIVE = [
  'core.v1.Pod',
  'core.v1.Service',
  'core.v1.Secret',
  'core.v1.ConfigMap',
  'core.v1.Node',
  'apps.v1.Deployment',
  'apps.v1.StatefulSet',
  'batch.v1.CronJob',
  'rbac.authorization.k8s.io.v1.ClusterRole',
  'networking.k8s.io.v1.Ingress',
  'policy.v1.PodDisruptionBudget',
  'coordination.k8s.io.v1.Lease',
  'resource.k8s.io.v1.ResourceClaim',
];

function args() {
  const out = { tag: 'v0.36.3' };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--api') out.api = argv[++i];
    else if (argv[i] === '--tag') out.tag = argv[++i];
    else if (argv[i] === '--check-all') out.checkAll = true;
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!out.api) throw new Error('usage: node scripts/export-protobuf-fixtures.mjs --api <git dir of kubernetes/api> [--tag v0.36.3] [--check-all]');
  return out;
}

const show = (api, tag, path, encoding) => execFileSync('git', ['--git-dir', api, 'show', `${tag}:${path}`], { encoding, maxBuffer: 1 << 26 });

/** `core.v1.Pod` for each served kind of api-resources-1.36.txt (the core group is `core` in fixture names). */
function servedFixtureNames() {
  const text = readFileSync(join(ROOT, 'core/api/src/generated/api-resources-1.36.txt'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => {
      const [, , apiVersion, , kind] = line.split(' | ').map((cell) => cell.trim());
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['core', apiVersion];
      return `${group}.${version}.${kind}`;
    });
}

const { api, tag, checkAll } = args();
const gitDir = api.endsWith('.git') || !readDirHasGit(api) ? api : join(api, '.git');
function readDirHasGit(dir) {
  try {
    readFileSync(join(dir, '.git', 'HEAD'));
    return true;
  } catch {
    return false;
  }
}

if (checkAll) {
  const { decodeProtobufObject } = await import(join(ROOT, 'core/api/dist/index.js'));
  let matched = 0;
  const problems = [];
  for (const name of servedFixtureNames()) {
    let pb;
    try {
      pb = show(gitDir, tag, `testdata/HEAD/${name}.pb`, 'buffer');
    } catch {
      problems.push(`${name}: no upstream fixture`);
      continue;
    }
    const json = JSON.parse(show(gitDir, tag, `testdata/HEAD/${name}.json`, 'utf8'));
    try {
      if (isDeepStrictEqual(decodeProtobufObject(pb), json)) matched++;
      else problems.push(`${name}: decoded object differs from the .json twin`);
    } catch (err) {
      problems.push(`${name}: ${err.message}`);
    }
  }
  console.log(`${matched} served kinds decode to their .json twin exactly`);
  for (const problem of problems) console.log(`  ${problem}`);
  process.exitCode = problems.some((p) => !p.endsWith('no upstream fixture')) ? 1 : 0;
} else {
  mkdirSync(OUT, { recursive: true });
  for (const name of REPRESENTATIVE) {
    writeFileSync(join(OUT, `${name}.pb`), show(gitDir, tag, `testdata/HEAD/${name}.pb`, 'buffer'));
    writeFileSync(join(OUT, `${name}.json`), show(gitDir, tag, `testdata/HEAD/${name}.json`, 'utf8'));
  }
  writeFileSync(join(OUT, 'SOURCE'), `k8s.io/api ${tag} testdata/HEAD, exported by scripts/export-protobuf-fixtures.mjs\n`);
  console.log(`${REPRESENTATIVE.length} fixtures written to ${OUT}`);
}
