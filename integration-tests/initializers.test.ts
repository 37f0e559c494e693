import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOn, kubectlVersions } from './clients.js';
import { startSkiff, tempDir, type RunningSkiff } from './harness.js';

// Initializers configured per kind in a config file (@skiff/apiserver's `initializers` option), driven by the real
// kubectl 1.36: a new ConfigMap carries its pending initializer and stays out of ordinary reads, `includeUninitialized`
// shows it, and an update that clears the entry (an external controller's job) makes it appear. Other kinds are
// untouched.

const kubectl136 = kubectlVersions().find((v) => v.minor === 36)!;
const project = tempDir('initializers');
const cacheDir = tempDir('initializers-cache');
let skiff: RunningSkiff;
const { kubectl, ok } = kubectlOn(kubectl136.path, () => skiff.kubeconfig, cacheDir);
const HELD = '/api/v1/namespaces/default/configmaps/held';

beforeAll(async () => {
  writeFileSync(
    join(project, 'skiff.config.json'),
    JSON.stringify({ plugins: [['@skiff/apiserver', { initializers: [{ name: 'approval.example.com', resources: ['configmaps', 'deployments.apps'] }] }]] }),
  );
  skiff = await startSkiff(['--data-dir', join(project, 'data'), '--nodes', '0'], { cwd: project });
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(project, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('initializers configured per kind', () => {
  it('hides a new object until its pending initializer is cleared', async () => {
    // kubectl's typed objects no longer have metadata.initializers (upstream removed it): the raw answer shows it.
    const manifest = join(project, 'held.json');
    writeFileSync(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held' }, data: { a: 'b' } }));
    const created = JSON.parse(await ok('create', '--raw', '/api/v1/namespaces/default/configmaps', '-f', manifest));
    expect(created.metadata.initializers).toEqual({ pending: [{ name: 'approval.example.com' }] });

    const hidden = await kubectl(['get', 'configmap', 'held']);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toContain('configmaps "held" not found');
    expect(await ok('get', 'configmaps', '-o', 'name')).not.toContain('configmap/held');

    const uninitialized = JSON.parse(await ok('get', '--raw', `${HELD}?includeUninitialized=true`));
    expect(uninitialized.metadata.initializers.pending).toEqual([{ name: 'approval.example.com' }]);

    const file = join(project, 'cleared.json');
    writeFileSync(file, JSON.stringify({ ...uninitialized, metadata: { ...uninitialized.metadata, initializers: { pending: [] } } }));
    const replaced = JSON.parse(await ok('replace', '--raw', HELD, '-f', file));
    expect(replaced.metadata.initializers).toBeUndefined();
    expect(JSON.parse(await ok('get', 'configmap', 'held', '-o', 'json')).data).toEqual({ a: 'b' });
  });

  it('leaves kinds without initializers alone', async () => {
    await ok('create', 'secret', 'generic', 'free', '--from-literal=a=b');
    expect(JSON.parse(await ok('get', '--raw', '/api/v1/namespaces/default/secrets/free')).metadata.initializers).toBeUndefined();
  });
});
