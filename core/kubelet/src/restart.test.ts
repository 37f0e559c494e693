import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from './test-support/node-plugins.js';

const names = ['keep-1', 'keep-2', 'keep-3'];
let dataDir: string | undefined;
let cluster: ControlPlane | undefined;
afterAll(async () => {
  await cluster?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Both runs keep their state in the same folder, as a restarted `skiff up` would. */
const startCluster = (dir: string) => startControlPlane(nodePlugins(), { dataDir: dir, config: { nodes: 2, logLevel: 'silent' } });

async function runningPods(current: ControlPlane): Promise<Pod[] | false> {
  const pods = await Promise.all(names.map((name) => current.client.get<Pod>(RESOURCES.pods, name, 'default')));
  return pods.every((p) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready) && pods;
}

describe('a whole-cluster restart', () => {
  it('brings every bound pod back to Running on a fresh runtime, keeping pod IPs', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-kubelet-restart-'));
    cluster = await startCluster(dataDir);
    for (const name of names) {
      await cluster.client.create(
        RESOURCES.pods,
        { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
        'default',
      );
    }
    const before = await waitFor('the pods to run', () => runningPods(cluster!));
    await cluster.stop();

    cluster = await startCluster(dataDir);
    const after = await waitFor('the pods to run again', async () => {
      const pods = await runningPods(cluster!);
      // Running with a container the new runtime started (the old one is gone with the old process).
      return pods && pods.every((p, i) => p.status!.containerStatuses![0]!.containerID !== before[i]!.status!.containerStatuses![0]!.containerID) && pods;
    });
    for (const [i, pod] of after.entries()) {
      expect(pod.spec.nodeName).toBe(before[i]!.spec.nodeName);
      expect(pod.status!.podIP).toBe(before[i]!.status!.podIP);
      expect(pod.status!.containerStatuses![0]!.restartCount).toBe(1);
    }
  });
});
