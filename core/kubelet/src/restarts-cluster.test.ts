import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from './test-support/node-plugins.js';

let cluster: ControlPlane;
// The kubelet sees exits on its runtime relist, every second: a back-off shorter than that would be over
// before the kubelet looked, and the container restarted at once.
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins({}, { crashLoopBackoffBaseSeconds: 1.5, crashLoopBackoffMaxSeconds: 3 }), {
    config: { nodes: 1, logLevel: 'silent' },
  });
});
afterAll(() => cluster?.stop());

describe('crash loops on a real API server', () => {
  it('shows CrashLoopBackOff with the last exit in lastState, a BackOff event, and keeps restarting', async () => {
    await cluster.client.create<Pod>(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'crasher', namespace: 'default', annotations: { 'skiff.io/simulate-run-ms': '50', 'skiff.io/simulate-exit-code': '3' } },
        spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
      },
      'default',
    );
    const looping = await waitFor('crasher to go CrashLoopBackOff', async () => {
      const pod = await cluster.client.get<Pod>(RESOURCES.pods, 'crasher', 'default');
      return pod.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff' && pod;
    });
    const status = looping.status!.containerStatuses![0]!;
    expect(status.state?.waiting!.message).toMatch(/^back-off (1\.5|3)s restarting failed container=app pod=crasher_default\(.+\)$/);
    expect(status.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(looping.status!.phase).toBe('Running');
    await waitFor('a BackOff event', async () =>
      (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.some(
        (e) =>
          e.involvedObject.name === 'crasher' &&
          e.reason === 'BackOff' &&
          e.message === `Back-off restarting failed container app in pod crasher_default(${looping.metadata.uid})`,
      ),
    );
    await waitFor('another restart after the back-off', async () => {
      const restarts = (await cluster.client.get<Pod>(RESOURCES.pods, 'crasher', 'default')).status?.containerStatuses?.[0]?.restartCount ?? 0;
      return restarts > status.restartCount;
    });
  });
});
