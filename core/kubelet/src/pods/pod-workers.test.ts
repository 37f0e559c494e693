import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { objectKey } from '@skiff/client';
import type { Node, Pod } from '@skiff/api';
import { createHooks, type ApiClient, type Informer } from '@skiff/kernel';
import type { ProbeManager } from '../probes/probe-manager.js';
import { fakeApi } from '../test-support/fake-api.js';
import { ipamNetwork, simulatedRuntime } from '../test-support/node-parts.js';
import { boundPod, silentLogger } from '../test-support/objects.js';
import { runtimeManager } from '../test-support/runtime-manager.js';
import { PodWorkers } from './pod-workers.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-pod-workers-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** The pods bound to the node, as the informer has them (set and removed by the test). */
function podInformer() {
  const pods = new Map<string, Pod>();
  const informer = {
    get: (key: string) => pods.get(key),
    list: () => [...pods.values()],
    addHandlers: () => undefined,
  } as unknown as Informer<Pod>;
  return { informer, set: (pod: Pod) => void pods.set(objectKey(pod), pod), remove: (pod: Pod) => void pods.delete(objectKey(pod)) };
}

async function setUp() {
  const runtime = await simulatedRuntime(join(dataDir, 'node'));
  const network = await ipamNetwork(join(dataDir, 'ipam'));
  const api = fakeApi();
  const client = Object.assign(api, { updateStatus: async (_type: unknown, pod: Pod) => pod, delete: async () => undefined }) as unknown as ApiClient;
  const { manager, volumes, files } = runtimeManager({ runtime, network, dataDir: join(dataDir, 'node'), api });
  const pods = podInformer();
  const probesRemoved: string[] = [];
  const probes = {
    update: () => undefined,
    status: () => ({}),
    removePod: (uid: string) => void probesRemoved.push(uid),
    stop: () => undefined,
  } as unknown as ProbeManager;
  const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } };
  const workers = new PodWorkers({
    nodeName: 'node-1',
    client,
    pods: pods.informer,
    manager,
    volumes,
    probes,
    runtime,
    recorder: { event: () => undefined } as never,
    hooks: createHooks(),
    node: () => node,
    hostIP: '127.0.0.1',
    logger: silentLogger,
    resyncMs: 60_000,
  });
  const sync = (pod: Pod) => (workers as unknown as { sync(key: string): Promise<void> }).sync(objectKey(pod));
  return { runtime, manager, files, pods, probesRemoved, workers, sync };
}

const withCache = (uid: string) => boundPod('web-1', { volumes: [{ name: 'cache', emptyDir: {} }] }, uid);

describe('PodWorkers', () => {
  it('forgets a pod recreated under the same name: probes, sandbox, volumes and files of the old uid', async () => {
    const { runtime, files, pods, probesRemoved, sync } = await setUp();
    const old = withCache('old-uid');
    pods.set(old);
    await sync(old);
    expect(await exists(files.volumeDir('old-uid', 'kubernetes.io/empty-dir', 'cache'))).toBe(true);

    const recreated = withCache('new-uid');
    pods.set(recreated);
    await sync(recreated);
    expect(probesRemoved).toContain('old-uid');
    expect(await exists(files.podDir('old-uid'))).toBe(false);
    expect(await exists(files.volumeDir('new-uid', 'kubernetes.io/empty-dir', 'cache'))).toBe(true);
    expect((await runtime.listPodSandbox()).map((sandbox) => sandbox.metadata.uid)).toEqual(['new-uid']);
  });

  it('stops a pod that finished and tears its volumes down, keeping its exited containers and folder until it is deleted', async () => {
    const { runtime, files, pods, sync } = await setUp();
    const pod = withCache('uid-1');
    pods.set(pod);
    await sync(pod);
    const finished: Pod = { ...pod, status: { phase: 'Succeeded' } };
    pods.set(finished);
    await sync(finished);
    expect((await runtime.listPodSandbox()).map((sandbox) => sandbox.state)).toEqual(['SANDBOX_NOTREADY']);
    expect((await runtime.listContainers()).map((container) => [container.metadata.name, container.state])).toEqual([['web', 'CONTAINER_EXITED']]);
    expect(await readdir(files.volumesDir('uid-1')).catch(() => [])).toEqual([]);
    expect(await exists(files.podDir('uid-1'))).toBe(true);

    pods.remove(finished);
    await sync(finished);
    expect(await runtime.listPodSandbox()).toEqual([]);
    expect(await runtime.listContainers()).toEqual([]);
  });

  it('housekeeping keeps the files of a pod added while it lists the runtime', async () => {
    const { manager, files, pods, workers } = await setUp();
    const pod = boundPod('web-1', {}, 'new-uid');
    await files.prepare({ namespace: 'default', name: 'web-1', uid: 'new-uid' });
    await files.prepare({ namespace: 'default', name: 'gone-1', uid: 'gone-uid' });
    const sandboxUids = manager.sandboxUids.bind(manager);
    manager.sandboxUids = async () => {
      const uids = await sandboxUids();
      pods.set(pod);
      return uids;
    };
    await workers.removeOrphanFiles();
    expect(await exists(files.podDir('new-uid'))).toBe(true);
    expect(await exists(files.podDir('gone-uid'))).toBe(false);
  });
});
