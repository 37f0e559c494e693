import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Volume } from '@skiff/api';
import type { VolumePlugin } from '@skiff/kernel';
import { PodFiles } from '../pods/pod-files.js';
import { fakeApi } from '../test-support/fake-api.js';
import { builtinVolumes } from '../test-support/node-parts.js';
import { boundPod, silentLogger } from '../test-support/objects.js';
import { VolumeManager, VolumeSetUpError } from './volume-manager.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-volume-manager-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const configMap = (value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { color: value } });

function setUp(options: { refreshMs?: number; plugins?: VolumePlugin[] } = {}) {
  const api = fakeApi();
  const files = new PodFiles(dataDir);
  const manager = new VolumeManager({
    plugins: options.plugins ?? builtinVolumes(),
    files,
    nodeName: 'node-1',
    client: api,
    node: () => undefined,
    logger: silentLogger,
    refreshMs: options.refreshMs,
  });
  const events: string[] = [];
  const sink = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  return { api, files, manager, events, sink };
}

const withVolumes = (volumes: Volume[]) => boundPod('web-1', { volumes });

describe('VolumeManager', () => {
  it('sets volumes up in <dataDir>/pods/<uid>/volumes/<plugin>/<name> and answers where each is', async () => {
    const { api, manager, sink } = setUp();
    api.put('configmaps', configMap('blue'));
    const hostDir = join(dataDir, 'host');
    const mounts = await manager.setUp(
      withVolumes([
        { name: 'cache', emptyDir: {} },
        { name: 'settings', configMap: { name: 'settings' } },
        { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
      ]),
      sink,
    );
    const volumes = join(dataDir, 'pods', 'uid-web-1', 'volumes');
    expect(Object.fromEntries(mounts)).toEqual({
      cache: { hostPath: join(volumes, 'kubernetes.io~empty-dir', 'cache'), readOnly: false },
      settings: { hostPath: join(volumes, 'kubernetes.io~configmap', 'settings'), readOnly: true },
      host: { hostPath: hostDir, readOnly: false },
    });
    expect(await readFile(join(volumes, 'kubernetes.io~configmap', 'settings', 'color'), 'utf8')).toBe('blue');
  });

  it('fails the first set-up with FailedMount events, naming each volume', async () => {
    const { manager, events, sink } = setUp();
    const pod = withVolumes([
      { name: 'settings', configMap: { name: 'settings' } },
      { name: 'odd', csi: { driver: 'example.com' } },
      { name: 'cache', emptyDir: {} },
    ]);
    const failure = await manager.setUp(pod, sink).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(VolumeSetUpError);
    expect(events).toEqual([
      'Warning FailedMount: MountVolume.SetUp failed for volume "settings" : configmap "settings" not found',
      'Warning FailedMount: MountVolume.SetUp failed for volume "odd" : no volume plugin matched',
    ]);
  });

  it('refreshes projected data on a later sync, and keeps a running pod on its volumes when a refresh fails', async () => {
    const { api, manager, events, sink } = setUp({ refreshMs: 0 });
    api.put('configmaps', configMap('blue'));
    const pod = withVolumes([{ name: 'settings', configMap: { name: 'settings' } }]);
    const mounts = await manager.setUp(pod, sink);
    const file = join(mounts.get('settings')!.hostPath, 'color');
    api.put('configmaps', configMap('green'));
    await manager.setUp(pod, sink);
    expect(await readFile(file, 'utf8')).toBe('green');
    api.remove('configmaps', 'default', 'settings');
    expect(await manager.setUp(pod, sink)).toEqual(mounts);
    expect(events).toEqual(['Warning FailedMount: MountVolume.SetUp failed for volume "settings" : configmap "settings" not found']);
    expect(await readFile(file, 'utf8')).toBe('green');
  });

  it('does not refresh before refreshMs has passed', async () => {
    const { api, manager, sink } = setUp({ refreshMs: 60_000 });
    api.put('configmaps', configMap('blue'));
    const pod = withVolumes([{ name: 'settings', configMap: { name: 'settings' } }]);
    const mounts = await manager.setUp(pod, sink);
    api.put('configmaps', configMap('green'));
    await manager.setUp(pod, sink);
    expect(await readFile(join(mounts.get('settings')!.hostPath, 'color'), 'utf8')).toBe('blue');
  });

  it("removes a pod's volumes and folders, and the folders of pods that are gone", async () => {
    const { files, manager, sink } = setUp();
    const hostDir = join(dataDir, 'host');
    await manager.setUp(
      withVolumes([
        { name: 'cache', emptyDir: {} },
        { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
      ]),
      sink,
    );
    await files.prepare({ namespace: 'default', name: 'web-1', uid: 'uid-web-1' });
    await writeFile(join(hostDir, 'kept'), 'x');
    await manager.removePod('uid-web-1');
    await expect(stat(files.podDir('uid-web-1'))).rejects.toThrow(/ENOENT/);
    expect(await readdir(files.logsDir)).toEqual([]);
    expect(await readFile(join(hostDir, 'kept'), 'utf8')).toBe('x');

    for (const uid of ['keep', 'gone']) await files.prepare({ namespace: 'default', name: uid, uid });
    await mkdir(join(files.volumesDir('gone'), 'example.com~unknown', 'data'), { recursive: true });
    await manager.removeOrphans((uid) => uid === 'keep');
    expect(await readdir(files.podsDir)).toEqual(['keep']);
    expect(await readdir(files.logsDir)).toEqual(['default_keep_keep']);
  });
});
