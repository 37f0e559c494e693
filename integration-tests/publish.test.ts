import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkPackages } from '../scripts/check-publish.mjs';
import { emptyFolder, enginesProblems, guideFiles, installFromRegistry, kubectl, NODE_FLOOR, run, startInstalledSkiff } from '../scripts/e2e-author-path.mjs';
import { publishWorkspace, registryEnv, startLocalRegistry, type LocalRegistry } from '../scripts/local-registry.mjs';

// The reduced form of `node scripts/e2e-author-path.mjs` (which adds `skiff new`, building and publishing two
// plugins, and placement checks): every package is published to a throw-away verdaccio, installed from it
// in an empty folder outside the repository with --engine-strict, and a cluster started from that install
// answers the real kubectl. Publishes the dist/ the build made (the full form runs each prepack build).

let registry: LocalRegistry;
let appDir: string;

beforeAll(async () => {
  registry = await startLocalRegistry();
  appDir = emptyFolder('publish');
});
afterAll(async () => {
  await registry?.stop();
  if (appDir) rmSync(appDir, { recursive: true, force: true });
});

describe('publishing every package', () => {
  it('passes the pre-publish checks: our names, public access, LICENSE, README, prepack, engines, repository, shipped files', () => {
    expect(checkPackages()).toEqual([]);
  });

  it('publishes every non-private workspace package to the local registry, and no example', async () => {
    const published = await publishWorkspace(registry, { prebuilt: true });
    expect(published).toEqual(expect.arrayContaining(['@skiff/cli@0.1.0', '@skiff/kernel@0.1.0', '@skiff/preset-dev@0.1.0', '@skiff/testing@0.1.0']));
    expect(published.every((name) => name.startsWith('@skiff/'))).toBe(true);
    const example = await run('npm', ['view', 'skiff-plugin-deny-label', 'version'], { env: registryEnv(registry) });
    expect(example.code).not.toBe(0);
  }, 180_000);

  it(`installs @skiff/cli and @skiff/preset-dev with --engine-strict in an empty folder; every package accepts Node ${NODE_FLOOR}`, async () => {
    await installFromRegistry(registry, appDir, ['@skiff/cli', '@skiff/preset-dev']);
    expect(enginesProblems(appDir)).toEqual([]);
    // Pinned by @skiff/apiserver: fastify's newer light-my-request pulls cookie 2, which needs Node 22.
    const lightMyRequest = JSON.parse(readFileSync(join(appDir, 'node_modules/light-my-request/package.json'), 'utf8'));
    expect(lightMyRequest.version).toBe('6.6.0');
  }, 240_000);

  it('starts a cluster from the installed skiff, and the real kubectl works against it', async () => {
    const cluster = await startInstalledSkiff(appDir, ['--nodes', '2', '--data-dir', join(appDir, 'data')]);
    try {
      const k = kubectl(cluster.kubeconfig, join(appDir, 'kubectl-cache'));
      const nodes = await k('get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}');
      expect(nodes.stderr).toBe('');
      expect(nodes.stdout.trim().split('\n')).toEqual(['node-1 True', 'node-2 True']);
      const created = await k('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2');
      expect(created.stdout.trim()).toBe('deployment.apps/web created');
    } finally {
      expect(await cluster.stop()).toBe(0);
    }
  }, 120_000);

  it('the publishing guide shows every file the full e2e writes when `skiff new` is not there', () => {
    expect([...guideFiles().keys()]).toEqual(
      expect.arrayContaining([
        'skiff-plugin-no-latest/package.json',
        'skiff-plugin-no-latest/tsconfig.json',
        'skiff-plugin-no-latest/src/index.ts',
        'skiff-plugin-no-latest/src/index.test.ts',
        'skiff-plugin-prefer-label/src/index.ts',
        'skiff-plugin-prefer-label/src/index.test.ts',
      ]),
    );
  });
});
