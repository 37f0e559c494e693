import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { adminRequest, podLog } from './test-support/api-https.js';
import { nodePlugins } from './test-support/node-plugins.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane(nodePlugins(), { config: { nodes: 1, logLevel: 'silent' } });
});
afterAll(() => cluster?.stop());

const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');
const EPHEMERAL = '/api/v1/namespaces/default/pods/target/ephemeralcontainers';

describe('ephemeral containers', () => {
  it('are started in a running pod once added through pods/ephemeralcontainers, shown in ephemeralContainerStatuses, with logs', async () => {
    await cluster.client.create<Pod>(RESOURCES.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'target', namespace: 'default' },
      spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['/bin/sleep', '10000'] }] },
    });
    await waitFor('the pod to run', async () => (await getPod('target')).status?.phase === 'Running');

    // What kubectl debug sends: a strategic merge patch of the subresource.
    const debugger1 = { name: 'debugger', image: 'busybox:1.36', command: ['sh', '-c', 'echo polo'], stdin: true, tty: true, terminationMessagePolicy: 'File' };
    const patched = await adminRequest(cluster, 'PATCH', EPHEMERAL, { spec: { ephemeralContainers: [debugger1] } }, 'application/strategic-merge-patch+json');
    expect(patched.status).toBe(200);
    const running = await waitFor('the ephemeral container to run', async () => {
      const status = (await getPod('target')).status?.ephemeralContainerStatuses?.[0];
      return status?.state?.running && status;
    });
    expect(running).toMatchObject({
      name: 'debugger',
      image: 'busybox:1.36',
      ready: false,
      restartCount: 0,
      containerID: expect.stringMatching(/^simulated:\/\//),
    });
    expect(running.started).toBeUndefined();
    const pod = await getPod('target');
    expect(pod.status?.containerStatuses?.map((status) => [status.name, status.ready])).toEqual([['main', true]]);
    expect(pod.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');
    expect(await podLog(cluster, 'default', 'target', 'container=debugger')).toEqual({
      status: 200,
      text: 'simulated container debugger started (image busybox:1.36)\n',
    });

    // A second one through an update of the subresource; the first keeps running as it was.
    const current = JSON.parse((await adminRequest(cluster, 'GET', EPHEMERAL)).text) as Pod;
    expect(current.spec.ephemeralContainers?.map((container) => container.name)).toEqual(['debugger']);
    current.spec.ephemeralContainers!.push({ name: 'debugger2', image: 'busybox:1.36', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' });
    expect((await adminRequest(cluster, 'PUT', EPHEMERAL, current)).status).toBe(200);
    await waitFor('both to run', async () => {
      const statuses = (await getPod('target')).status?.ephemeralContainerStatuses ?? [];
      return statuses.length === 2 && statuses.every((status) => status.state?.running);
    });
    const after = (await getPod('target')).status?.ephemeralContainerStatuses?.find((status) => status.name === 'debugger');
    expect(after?.containerID).toBe(running.containerID);
  });
});
