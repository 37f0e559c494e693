import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from '../test-support/node-plugins.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins({}, { crashLoopBackoffBaseSeconds: 1, crashLoopBackoffMaxSeconds: 2 }), {
    config: { nodes: 1, logLevel: 'silent' },
  });
});
afterAll(() => cluster?.stop());

const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');
const ready = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === 'Ready');

async function create(name: string, container: Record<string, unknown>, annotations?: Record<string, string>): Promise<void> {
  await cluster.client.create<Pod>(
    RESOURCES.pods,
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27', ...container }] },
    },
    'default',
  );
}

describe('probes on the simulated runtime', () => {
  it('counts HTTP and TCP probes as passing: the pod becomes Ready once its readiness probe ran', async () => {
    await create('web', {
      readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
      livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
    });
    const pod = await waitFor('web to be Ready', async () => {
      const current = await getPod('web');
      return ready(current)?.status === 'True' && current;
    });
    expect(pod.status!.containerStatuses![0]).toMatchObject({ ready: true, started: true, restartCount: 0 });
  });

  it('keeps a pod whose exec readiness probe fails Running but not Ready', async () => {
    await create('unready', { readinessProbe: { exec: { command: ['check'] }, periodSeconds: 1 } }, { 'skiff.io/simulate-exec-exit-code': '1' });
    await waitFor('an Unhealthy event for unready', async () =>
      (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.some((e) => e.involvedObject.name === 'unready' && e.reason === 'Unhealthy'),
    );
    const pod = await getPod('unready');
    expect(pod.status?.phase).toBe('Running');
    expect(ready(pod)).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [app]' });
    expect(pod.status!.containerStatuses![0]).toMatchObject({ ready: false, started: true });
  });

  it('restarts a container whose liveness probe fails: Unhealthy, Killing, restartCount up', async () => {
    await create(
      'sick',
      { livenessProbe: { exec: { command: ['alive'] }, periodSeconds: 1, failureThreshold: 1 } },
      { 'skiff.io/simulate-exec-exit-code': '1' },
    );
    const restarted = await waitFor('sick to be restarted', async () => {
      const pod = await getPod('sick');
      return (pod.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && pod;
    });
    expect(restarted.status!.containerStatuses![0]!.lastState?.terminated).toBeDefined();
    const events = (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.filter((e) => e.involvedObject.name === 'sick');
    expect(events.map((e) => `${e.reason}: ${e.message}`)).toEqual(
      expect.arrayContaining(['Unhealthy: Liveness probe failed: ', 'Killing: Container app failed liveness probe, will be restarted']),
    );
  });
});
