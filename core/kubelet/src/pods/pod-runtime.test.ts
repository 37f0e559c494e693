import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '@skiff/api';
import type { NetworkAttachment } from '@skiff/kernel';
import { ipamNetwork, simulatedRuntime } from '../test-support/node-parts.js';
import { boundPod } from '../test-support/objects.js';
import { runtimeManager } from '../test-support/runtime-manager.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-kubelet-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function setUp(failImages: string[] = []) {
  const runtime = await simulatedRuntime(dataDir, { failImages });
  const network = await ipamNetwork(dataDir);
  const { manager, volumes, files, api } = runtimeManager({ runtime, network, dataDir });
  const events: string[] = [];
  const sink = (type: string, reason: string, message: string) => void events.push(`${type} ${reason}: ${message}`);
  return { runtime, network, manager, volumes, files, api, events, sink };
}

describe('PodRuntimeManager', () => {
  it('runs a sandbox on the pod network, pulls, creates and starts the containers', async () => {
    const { runtime, manager, events, sink } = await setUp();
    const observed = await manager.sync(boundPod('web-1'), sink);
    expect(observed).toMatchObject({ sandboxReady: true, podIP: '10.244.1.2', initialized: true, incomplete: false });
    expect(observed.containers[0]).toMatchObject({ name: 'web', restartCount: 0, status: { state: 'CONTAINER_RUNNING' } });
    expect(observed.containers[0]!.waiting).toBeUndefined();
    expect(events.map((e) => e.split(':')[0])).toEqual(['Normal Pulling', 'Normal Pulled', 'Normal Created', 'Normal Started']);
    expect(events[1]).toMatch(/^Normal Pulled: Successfully pulled image "nginx:1\.27" in \d+ms \(\d+ms including waiting\)\. Image size: \d+ bytes\.$/);
    expect(events[3]).toBe('Normal Started: Started container web');
    const sandboxes = await runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': 'uid-web-1' } });
    expect(sandboxes).toHaveLength(1);
    expect(sandboxes[0]!.labels).toMatchObject({ 'io.kubernetes.pod.name': 'web-1', 'io.kubernetes.pod.namespace': 'default' });
  });

  it('converges: a second sync changes nothing and uses the image already present', async () => {
    const { runtime, manager, events, sink } = await setUp();
    const first = await manager.sync(boundPod('web-1'), sink);
    events.length = 0;
    const second = await manager.sync(boundPod('web-1'), sink);
    expect(second.containers[0]!.status!.id).toBe(first.containers[0]!.status!.id);
    expect(second.podIP).toBe(first.podIP);
    expect(events).toEqual([]);
    expect(await runtime.listContainers()).toHaveLength(1);
  });

  it('reports ErrImagePull, then ImagePullBackOff, and asks to be retried', async () => {
    const { manager, events, sink } = await setUp(['nginx:1.27']);
    const first = await manager.sync(boundPod('web-1'), sink);
    expect(first.incomplete).toBe(true);
    expect(first.containers[0]!.waiting).toMatchObject({ reason: 'ErrImagePull' });
    expect(first.containers[0]!.waiting!.message).toContain('Failed to pull image "nginx:1.27"');
    expect(events).toContain('Warning Failed: Error: ErrImagePull');
    const second = await manager.sync(boundPod('web-1'), sink);
    expect(second.containers[0]!.waiting).toMatchObject({ reason: 'ImagePullBackOff', message: 'Back-off pulling image "nginx:1.27"' });
    expect(events).toContain('Normal BackOff: Back-off pulling image "nginx:1.27"');
  });

  it('runs init containers to completion before the containers', async () => {
    const { runtime, manager, events, sink } = await setUp();
    const pod = boundPod('web-1', { initContainers: [{ name: 'migrate', image: 'busybox:1.36' }] });
    const observed = await manager.sync(pod, sink);
    expect(observed.initialized).toBe(true);
    expect(observed.initContainers[0]!.status).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0 });
    expect(observed.containers[0]!.status).toMatchObject({ state: 'CONTAINER_RUNNING' });
    expect(events.filter((e) => e.startsWith('Normal Started'))).toEqual([
      'Normal Started: Started container migrate',
      'Normal Started: Started container web',
    ]);
    await manager.sync(pod, sink);
    expect(await runtime.listContainers()).toHaveLength(2);
  });

  it('holds the containers back while an init container cannot start', async () => {
    const { manager, sink } = await setUp(['busybox:1.36']);
    const observed = await manager.sync(boundPod('web-1', { initContainers: [{ name: 'migrate', image: 'busybox:1.36' }] }), sink);
    expect(observed.initialized).toBe(false);
    expect(observed.initContainers[0]!.waiting).toMatchObject({ reason: 'ErrImagePull' });
    expect(observed.containers[0]).toMatchObject({ waiting: { reason: 'PodInitializing' } });
    expect(observed.containers[0]!.status).toBeUndefined();
  });

  it('restarts an exited container under restartPolicy Always, counting the restart', async () => {
    const { runtime, manager, sink } = await setUp();
    const first = await manager.sync(boundPod('web-1'), sink);
    await runtime.stopContainer(first.containers[0]!.status!.id, 0);
    const second = await manager.sync(boundPod('web-1'), sink);
    expect(second.containers[0]).toMatchObject({ restartCount: 1, status: { state: 'CONTAINER_RUNNING', metadata: { attempt: 1 } } });
    const never = boundPod('job-1', { restartPolicy: 'Never' });
    const job = await manager.sync(never, sink);
    await runtime.stopContainer(job.containers[0]!.status!.id, 0);
    expect((await manager.sync(never, sink)).containers[0]).toMatchObject({ restartCount: 0, status: { state: 'CONTAINER_EXITED' } });
  });

  it('tears a pod down: containers stopped, IP released, sandbox removed', async () => {
    const { runtime, network, manager, events, sink } = await setUp();
    await manager.sync(boundPod('web-1'), sink);
    await manager.killPod('default', 'web-1', 30, sink);
    expect(await runtime.listPodSandbox()).toEqual([]);
    expect(await runtime.listContainers()).toEqual([]);
    expect(events).toContain('Normal Killing: Stopping container web');
    const next = await network.add({
      containerId: 'x',
      netnsPath: '',
      ifName: 'eth0',
      podName: 'x',
      podNamespace: 'default',
      podUid: 'x',
      preferredIP: '10.244.1.2',
    });
    expect(next.ips[0]!.address).toBe('10.244.1.2/24');
  });

  it('brings a pod back after the runtime lost everything: new sandbox, same IP, one more restart', async () => {
    const before = await setUp();
    const pod = boundPod('web-1');
    const observed = await before.manager.sync(pod, before.sink);
    const stored: Pod = {
      ...pod,
      status: {
        podIP: observed.podIP,
        containerStatuses: [
          { name: 'web', image: 'nginx:1.27', imageID: 'x', containerID: 'simulated://old', ready: true, restartCount: 0, state: { running: {} } },
        ],
      },
    };
    await before.runtime.close?.();

    const after = await setUp();
    const again = await after.manager.sync(stored, after.sink);
    expect(again.podIP).toBe(observed.podIP);
    expect(again.containers[0]).toMatchObject({ restartCount: 1, status: { state: 'CONTAINER_RUNNING' } });
    expect(again.containers[0]!.status!.id).not.toBe(observed.containers[0]!.status!.id);
  });

  it('replaces a sandbox that stopped, and kills orphans', async () => {
    const { runtime, manager, sink } = await setUp();
    const first = await manager.sync(boundPod('web-1'), sink);
    const [sandbox] = await runtime.listPodSandbox();
    await runtime.stopPodSandbox(sandbox!.id);
    const second = await manager.sync(boundPod('web-1'), sink);
    const sandboxes = await runtime.listPodSandbox();
    expect(sandboxes).toHaveLength(1);
    expect(sandboxes[0]).toMatchObject({ state: 'SANDBOX_READY', metadata: { attempt: 1 } });
    expect(second.podIP).toBe(first.podIP);

    await manager.sync(boundPod('gone-1'), sink);
    await manager.killOrphans((_namespace, name) => name === 'web-1');
    expect((await runtime.listPodSandbox()).map((s) => s.metadata.name)).toEqual(['web-1']);
  });

  it('removes the sandbox of an earlier pod with the same name', async () => {
    const { runtime, manager, sink } = await setUp();
    await manager.sync(boundPod('web-1', {}, 'old-uid'), sink);
    await manager.sync(boundPod('web-1', {}, 'new-uid'), sink);
    expect((await runtime.listPodSandbox()).map((s) => s.metadata.uid)).toEqual(['new-uid']);
  });

  it('rolls a failed sandbox start back whole: network DEL, stop, remove; a failing step does not hide the cause', async () => {
    const runtime = await simulatedRuntime(dataDir);
    const network = await ipamNetwork(dataDir);
    const deleted: string[] = [];
    const flaky = new Proxy(network, {
      get(target, property) {
        if (property === 'add')
          return async (attachment: NetworkAttachment) => {
            const result = await target.add(attachment);
            return { ...result, ips: [] };
          };
        if (property === 'del')
          return async (attachment: NetworkAttachment) => {
            deleted.push(attachment.containerId);
            return target.del(attachment);
          };
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const failingStop = new Proxy(runtime, {
      get(target, property) {
        if (property === 'stopPodSandbox') return async () => Promise.reject(new Error('stop failed'));
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { manager } = runtimeManager({ runtime: failingStop, network: flaky, dataDir });
    await expect(manager.sync(boundPod('web-1'))).rejects.toMatchObject({ code: 'SKIFF_ERR_KUBELET_NETWORK_NO_IP' });
    expect(deleted).toHaveLength(1);
    // The address the failed ADD took is free again (host-local keeps one file per allocated address).
    expect((await readdir(dataDir)).filter((file) => file.startsWith('10.'))).toEqual([]);
  });

  it('starts containers left created (a kubelet restart between create and start, a failed start)', async () => {
    const runtime = await simulatedRuntime(dataDir);
    const network = await ipamNetwork(dataDir);
    let failStarts = 1;
    const flaky = new Proxy(runtime, {
      get(target, property) {
        if (property === 'startContainer')
          return async (id: string) => (failStarts-- > 0 ? Promise.reject(new Error('start failed')) : target.startContainer(id));
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { manager } = runtimeManager({ runtime: flaky, network, dataDir });
    const pod = boundPod('web-1', { initContainers: [{ name: 'migrate', image: 'busybox:1.36' }] });
    const stuck = await manager.sync(pod);
    expect(stuck).toMatchObject({ initialized: false, incomplete: true });
    expect(stuck.initContainers[0]).toMatchObject({
      waiting: { reason: 'RunContainerError', message: 'start failed' },
      status: { state: 'CONTAINER_CREATED' },
    });

    const resumed = await manager.sync(pod);
    expect(resumed).toMatchObject({ initialized: true, incomplete: false });
    expect(resumed.initContainers[0]!.status).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0, metadata: { attempt: 0 } });
    expect(resumed.containers[0]!.status).toMatchObject({ state: 'CONTAINER_RUNNING' });

    const regular = boundPod('web-2');
    failStarts = 2;
    expect((await manager.sync(regular)).containers[0]).toMatchObject({ waiting: { reason: 'RunContainerError' }, status: { state: 'CONTAINER_CREATED' } });
    const again = await manager.sync(regular);
    expect(again.incomplete).toBe(true);
    expect(again.containers[0]).toMatchObject({ waiting: { reason: 'RunContainerError', message: 'start failed' }, status: { state: 'CONTAINER_CREATED' } });
    const started = await manager.sync(regular);
    expect(started.containers[0]!.status).toMatchObject({ state: 'CONTAINER_RUNNING', metadata: { attempt: 0 } });
    expect(started.containers[0]!.waiting).toBeUndefined();
  });

  it('gives hostNetwork pods the node address and no pod network', async () => {
    const { manager, sink } = await setUp();
    expect((await manager.sync(boundPod('host-1', { hostNetwork: true }), sink)).podIP).toBe('127.0.0.1');
  });
});
