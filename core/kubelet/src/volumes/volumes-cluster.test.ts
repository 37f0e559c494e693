import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, isApiError, type Event, type KubeObject, type Pod } from '@skiff/api';
import serviceAccountTokens from '@skiff/plugin-authn-serviceaccount';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from '../test-support/node-plugins.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane([...nodePlugins(), serviceAccountTokens], { config: { nodes: 1, logLevel: 'silent' } });
  await cluster.client.create<KubeObject>(
    RESOURCES.serviceaccounts,
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'default' } },
    'default',
  );
});
afterAll(() => cluster?.stop());

const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');
const nodeDir = () => join(cluster.dataDir, 'nodes', 'node-1');

describe('volumes on a real API server', () => {
  it('waits for a missing ConfigMap (FailedMount), then runs with its files and a token bound to the pod; deleting the pod removes them', async () => {
    await cluster.client.create<Pod>(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'mounted', namespace: 'default' },
        spec: {
          containers: [{ name: 'app', image: 'nginx:1.27', volumeMounts: [{ name: 'settings', mountPath: '/etc/settings' }] }],
          volumes: [
            { name: 'settings', configMap: { name: 'settings' } },
            {
              name: 'kube-api-access-x1',
              projected: {
                defaultMode: 420,
                sources: [
                  { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
                  { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
                ],
              },
            },
          ],
        },
      },
      'default',
    );
    const event = await waitFor('a FailedMount event', async () =>
      (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.find((e) => e.involvedObject.name === 'mounted' && e.reason === 'FailedMount'),
    );
    expect(event.message).toBe('MountVolume.SetUp failed for volume "settings" : configmap "settings" not found');
    expect((await getPod('mounted')).status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');

    await cluster.client.create<KubeObject>(
      RESOURCES.configmaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { color: 'blue' } },
      'default',
    );
    const running = await waitFor('mounted to run', async () => {
      const pod = await getPod('mounted');
      return pod.status?.phase === 'Running' && pod;
    });
    const volumes = join(nodeDir(), 'pods', running.metadata.uid!, 'volumes');
    expect(await readFile(join(volumes, 'kubernetes.io~configmap', 'settings', 'color'), 'utf8')).toBe('blue');
    const token = await readFile(join(volumes, 'kubernetes.io~projected', 'kube-api-access-x1', 'token'), 'utf8');
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims['kubernetes.io']).toMatchObject({
      namespace: 'default',
      pod: { name: 'mounted', uid: running.metadata.uid },
      serviceaccount: { name: 'default' },
    });
    expect(await readFile(join(volumes, 'kubernetes.io~projected', 'kube-api-access-x1', 'namespace'), 'utf8')).toBe('default');

    await cluster.client.delete(RESOURCES.pods, 'mounted', 'default');
    await waitFor('mounted to be gone with its folder', async () => {
      const gone = await getPod('mounted').then(
        () => false,
        (err: unknown) => isApiError(err, 'NotFound'),
      );
      return gone && (await stat(join(nodeDir(), 'pods', running.metadata.uid!)).catch(() => undefined)) === undefined;
    });
    await expect(stat(join(nodeDir(), 'logs', `default_mounted_${running.metadata.uid}`))).rejects.toThrow(/ENOENT/);
  });
});

describe('hostPath volumes on a simulated node', () => {
  it("are made under the node's folder, never on the machine, subPaths included", async () => {
    // A path of this machine that nothing has created.
    const fresh = join(await mkdtemp(join(tmpdir(), 'skiff-hostpath-')), 'made-by-a-pod');
    const file = join(fresh, 'sub', 'file.txt');
    try {
      await cluster.client.create<Pod>(
        RESOURCES.pods,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'host-paths', namespace: 'default' },
          spec: {
            containers: [
              {
                name: 'app',
                image: 'nginx:1.27',
                volumeMounts: [
                  { name: 'dir', mountPath: '/data' },
                  { name: 'dir', mountPath: '/logs', subPath: 'logs' },
                  { name: 'file', mountPath: '/etc/app.txt' },
                ],
              },
            ],
            volumes: [
              { name: 'dir', hostPath: { path: fresh, type: 'DirectoryOrCreate' } },
              { name: 'file', hostPath: { path: file, type: 'FileOrCreate' } },
            ],
          },
        },
        'default',
      );
      await waitFor('host-paths to run', async () => (await getPod('host-paths')).status?.phase === 'Running');
      await expect(stat(fresh)).rejects.toThrow(/ENOENT/);
      const standIn = join(nodeDir(), 'host', fresh);
      expect((await stat(standIn)).isDirectory()).toBe(true);
      expect((await stat(join(standIn, 'logs'))).isDirectory()).toBe(true);
      expect((await stat(join(nodeDir(), 'host', file))).isFile()).toBe(true);
      await cluster.client.delete(RESOURCES.pods, 'host-paths', 'default');
    } finally {
      await rm(join(fresh, '..'), { recursive: true, force: true });
    }
  });
});

describe('a kubelet that stops its pods on shutdown', () => {
  it("tears their volumes down too, keeping the pods' folders", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-kubelet-shutdown-'));
    try {
      const stopping = await startControlPlane(nodePlugins({}, { podsOnShutdown: 'stop' }), { dataDir, config: { nodes: 1, logLevel: 'silent' } });
      let uid: string;
      try {
        await stopping.client.create<Pod>(
          RESOURCES.pods,
          {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'cached', namespace: 'default' },
            spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], volumes: [{ name: 'cache', emptyDir: {} }] },
          },
          'default',
        );
        const running = await waitFor('cached to run', async () => {
          const pod = await stopping.client.get<Pod>(RESOURCES.pods, 'cached', 'default');
          return pod.status?.phase === 'Running' && pod;
        });
        uid = running.metadata.uid!;
        await stat(join(dataDir, 'nodes', 'node-1', 'pods', uid, 'volumes', 'kubernetes.io~empty-dir', 'cache'));
      } finally {
        await stopping.stop();
      }
      const podDir = join(dataDir, 'nodes', 'node-1', 'pods', uid);
      expect(await readdir(join(podDir, 'volumes')).catch(() => [])).toEqual([]);
      expect((await stat(podDir)).isDirectory()).toBe(true);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
