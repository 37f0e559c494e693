import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { podLog } from './test-support/api-https.js';
import { nodePlugins } from './test-support/node-plugins.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins({ runMs: 200 }, { crashLoopBackoffBaseSeconds: 0.2, crashLoopBackoffMaxSeconds: 0.4 }), {
    config: { nodes: 1, logLevel: 'silent' },
  });
});
afterAll(() => cluster?.stop());

const pod = (name: string, spec: Partial<Pod['spec']> = {}, annotations: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', annotations },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36' }], ...spec },
});
const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');
const STARTED = 'simulated container main started (image busybox:1.36)\n';

describe('pods that finished', () => {
  it("serve their containers' logs until they are deleted, their sandbox stopped", async () => {
    await cluster.client.create(RESOURCES.pods, pod('done', { restartPolicy: 'Never' }), 'default');
    const done = await waitFor('the pod to succeed', async () => {
      const current = await getPod('done');
      return current.status?.phase === 'Succeeded' && current;
    });
    expect(done.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(await podLog(cluster, 'default', 'done')).toEqual({ status: 200, text: STARTED });
    const stopped = await waitFor('the pod to show its sandbox stopped', async () => {
      const current = await getPod('done');
      return current.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status === 'False' && current;
    });
    expect(stopped.status).toMatchObject({ phase: 'Succeeded', podIP: done.status?.podIP });
    expect(await podLog(cluster, 'default', 'done')).toEqual({ status: 200, text: STARTED });
    const noPrevious = await podLog(cluster, 'default', 'done', 'previous=true');
    expect(noPrevious.status).toBe(400);
    expect(JSON.parse(noPrevious.text)).toMatchObject({ message: 'previous terminated container "main" in pod "done" not found' });

    await cluster.client.delete(RESOURCES.pods, 'done', 'default');
    await waitFor('the pod to be gone', async () => !(await cluster.client.list<Pod>(RESOURCES.pods, 'default')).items.some((p) => p.metadata.name === 'done'));
    const connection = cluster.kernel.resolve('nodeConnections').get(done.spec.nodeName!)!;
    const ref = { namespace: 'default', name: 'done', uid: done.metadata.uid! };
    const refusal = await waitFor('the kubelet to remove the containers', () =>
      connection.containerLogs(ref, 'main', {}, new AbortController().signal).then(
        () => undefined,
        (err: Error) => err,
      ),
    );
    expect(refusal.message).toBe(`pod "default/done" (uid ${ref.uid}) is not on node "${done.spec.nodeName}"`);
  });

  it('serve the previous instance of a restarted container with previous=true', async () => {
    await cluster.client.create(RESOURCES.pods, pod('crashing', {}, { 'skiff.io/simulate-run-ms': '100', 'skiff.io/simulate-exit-code': '1' }), 'default');
    await waitFor('a restart', async () => ((await getPod('crashing')).status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    expect(await podLog(cluster, 'default', 'crashing', 'previous=true')).toEqual({ status: 200, text: STARTED });
    expect(await podLog(cluster, 'default', 'crashing')).toEqual({ status: 200, text: STARTED });
    await cluster.client.delete(RESOURCES.pods, 'crashing', 'default');
  });
});

describe('activeDeadlineSeconds', () => {
  it('fails a running pod once its deadline is set and passed: DeadlineExceeded, containers killed, logs kept', async () => {
    await cluster.client.create(RESOURCES.pods, pod('deadline'), 'default');
    const running = await waitFor('the pod to run', async () => {
      const current = await getPod('deadline');
      return current.status?.phase === 'Running' && current;
    });
    await cluster.client.patch(RESOURCES.pods, 'deadline', { spec: { activeDeadlineSeconds: 1 } }, { namespace: 'default', patchType: 'merge' });
    const failed = await waitFor('the pod to fail', async () => {
      const current = await getPod('deadline');
      return current.status?.phase === 'Failed' && current;
    });
    expect(Date.parse(running.status!.startTime!) + 1000).toBeLessThanOrEqual(Date.now());
    expect(failed.status).toMatchObject({ reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' });
    const terminated = await waitFor(
      'the container to show terminated',
      async () => (await getPod('deadline')).status?.containerStatuses?.[0]?.state?.terminated,
    );
    expect(terminated.containerID).toBe(running.status?.containerStatuses?.[0]?.containerID);
    const ready = (await getPod('deadline')).status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    const events = (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.filter((e) => e.involvedObject.name === 'deadline');
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['DeadlineExceeded', 'Killing']));
    expect(await podLog(cluster, 'default', 'deadline')).toEqual({ status: 200, text: STARTED });
  });
});
