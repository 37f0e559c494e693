import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, isApiError, type Event, type Lease, type Node, type Pod } from '@skiff/api';
import { definePlugin } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from './test-support/node-plugins.js';

const pod = (name: string, spec: Partial<Pod['spec']> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...spec },
});

/** Turns away pods labelled reject=yes, as a node-level admission plugin would. */
const rejectLabelled = definePlugin({
  name: 'test-reject-labelled',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.podAdmit.tap('test-reject-labelled', (candidate) =>
      candidate.metadata.labels?.reject === 'yes' ? { reason: 'NodeAffinity', message: 'Pod was rejected: labelled reject=yes' } : undefined,
    );
  },
});

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane([...nodePlugins({ failImages: ['missing/image:1'] }), rejectLabelled], { config: { nodes: 2, logLevel: 'silent' } });
});
afterAll(() => cluster?.stop());

const getPod = (name: string) => cluster.client.get<Pod>(RESOURCES.pods, name, 'default');
const eventsOf = async (name: string) => (await cluster.client.list<Event>(RESOURCES.events, 'default')).items.filter((e) => e.involvedObject.name === name);

describe('kubelet and scheduler on a real API server', () => {
  it('registers Ready nodes with capacity, labels, pod CIDRs and leases', async () => {
    const nodes = await cluster.client.list<Node>(RESOURCES.nodes);
    const byName = new Map(nodes.items.map((n) => [n.metadata.name, n]));
    expect([...byName.keys()].sort()).toEqual(['node-1', 'node-2']);
    const node = byName.get('node-2')!;
    expect(node.metadata.labels).toMatchObject({ 'kubernetes.io/hostname': 'node-2', 'kubernetes.io/os': 'linux' });
    expect(node.spec?.podCIDR).toBe('10.244.2.0/24');
    expect(node.status?.capacity).toEqual({ cpu: '4', 'ephemeral-storage': '100Gi', memory: '8Gi', pods: '110' });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
    expect(node.status?.nodeInfo).toMatchObject({ kubeletVersion: 'v1.36.0-skiff', containerRuntimeVersion: 'simulated://0.1.0', operatingSystem: 'linux' });
    expect(node.status?.addresses).toEqual([
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: 'node-2' },
    ]);
    const lease = await cluster.client.get<Lease>(RESOURCES.leases, 'node-2', 'kube-node-lease');
    expect(lease.spec).toMatchObject({ holderIdentity: 'node-2', leaseDurationSeconds: 40 });
    const renewed = lease.spec?.renewTime;
    await waitFor(
      'the lease to be renewed',
      async () => (await cluster.client.get<Lease>(RESOURCES.leases, 'node-2', 'kube-node-lease')).spec?.renewTime !== renewed,
    );
  });

  it('schedules a pod and runs it to Ready', async () => {
    await cluster.client.create(RESOURCES.pods, pod('web-1'), 'default');
    const running = await waitFor('web-1 to be Ready', async () => {
      const current = await getPod('web-1');
      return current.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && current;
    });
    expect(running.spec.nodeName).toMatch(/^node-[12]$/);
    const subnet = running.spec.nodeName === 'node-1' ? '10.244.1.' : '10.244.2.';
    expect(running.status).toMatchObject({ phase: 'Running', hostIP: '127.0.0.1', qosClass: 'BestEffort' });
    expect(running.status!.podIP!.startsWith(subnet)).toBe(true);
    expect(running.status!.containerStatuses![0]).toMatchObject({ name: 'web', ready: true, started: true, restartCount: 0 });
    expect(running.status!.containerStatuses![0]!.containerID).toMatch(/^simulated:\/\/[0-9a-f]{64}$/);
    const reasons = await waitFor('the pod events', async () => {
      const seen = (await eventsOf('web-1')).map((e) => e.reason);
      return ['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started'].every((r) => seen.includes(r)) && seen;
    });
    expect(reasons).toContain('Scheduled');
    const scheduled = (await eventsOf('web-1')).find((e) => e.reason === 'Scheduled')!;
    expect(scheduled.message).toBe(`Successfully assigned default/web-1 to ${running.spec.nodeName}`);
  });

  it('spreads pods over the nodes', async () => {
    for (const name of ['spread-1', 'spread-2', 'spread-3', 'spread-4']) {
      await cluster.client.create(
        RESOURCES.pods,
        pod(name, { containers: [{ name: 'web', image: 'nginx:1.27', resources: { requests: { cpu: '500m' } } }] }),
        'default',
      );
    }
    const nodes = await waitFor('the spread pods to be bound', async () => {
      const bound = await Promise.all(['spread-1', 'spread-2', 'spread-3', 'spread-4'].map(async (name) => (await getPod(name)).spec.nodeName));
      return bound.every(Boolean) && bound;
    });
    expect(new Set(nodes).size).toBe(2);
  });

  it('says why a pod fits nowhere, on the pod and in an event', async () => {
    await cluster.client.create(
      RESOURCES.pods,
      pod('huge-1', { containers: [{ name: 'web', image: 'nginx:1.27', resources: { requests: { cpu: '100' } } }] }),
      'default',
    );
    const condition = await waitFor('huge-1 to be marked unschedulable', async () =>
      (await getPod('huge-1')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'),
    );
    expect(condition).toMatchObject({ reason: 'Unschedulable', message: '0/2 nodes are available: 2 Insufficient cpu.' });
    const event = await waitFor('a FailedScheduling event', async () => (await eventsOf('huge-1')).find((e) => e.reason === 'FailedScheduling'));
    expect(event).toMatchObject({ type: 'Warning', message: '0/2 nodes are available: 2 Insufficient cpu.' });
  });

  it('shows ErrImagePull for an image the registry does not have', async () => {
    await cluster.client.create(RESOURCES.pods, pod('broken-1', { containers: [{ name: 'web', image: 'missing/image:1' }] }), 'default');
    const waiting = await waitFor('broken-1 to wait on its image', async () => (await getPod('broken-1')).status?.containerStatuses?.[0]?.state?.waiting);
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(waiting.reason);
    expect((await getPod('broken-1')).status?.phase).toBe('Pending');
  });

  it('fails a pod that node admission rejects', async () => {
    await cluster.client.create(
      RESOURCES.pods,
      { ...pod('rejected-1'), metadata: { name: 'rejected-1', namespace: 'default', labels: { reject: 'yes' } } },
      'default',
    );
    const status = await waitFor('rejected-1 to fail', async () => {
      const current = await getPod('rejected-1');
      return current.status?.phase === 'Failed' && current.status;
    });
    expect(status).toMatchObject({ reason: 'NodeAffinity', message: 'Pod was rejected: labelled reject=yes' });
  });

  it('tears a deleted pod down and removes it', async () => {
    await cluster.client.create(RESOURCES.pods, pod('doomed-1'), 'default');
    await waitFor('doomed-1 to run', async () => (await getPod('doomed-1')).status?.phase === 'Running');
    await cluster.client.delete(RESOURCES.pods, 'doomed-1', 'default');
    await waitFor('doomed-1 to be gone', async () => {
      try {
        await getPod('doomed-1');
        return false;
      } catch (err) {
        return isApiError(err, 'NotFound');
      }
    });
  });
  it('notices containers that exit by themselves: Succeeded or Failed with the terminated state', async () => {
    // The pod resync is 30 s: only the runtime relist can see these exits within waitFor's 10 s.
    const done = async (name: string) =>
      waitFor(`${name} to finish`, async () => {
        const current = await getPod(name);
        return (current.status?.phase === 'Succeeded' || current.status?.phase === 'Failed') && current;
      });
    await cluster.client.create(RESOURCES.pods, pod('finishes', { restartPolicy: 'Never', containers: [{ name: 'task', image: 'busybox:1.36' }] }), 'default');
    const failing = pod('fails', { restartPolicy: 'Never', containers: [{ name: 'task', image: 'busybox:1.36' }] });
    failing.metadata.annotations = { 'skiff.io/simulate-run-ms': '200', 'skiff.io/simulate-exit-code': '2' };
    await cluster.client.create(RESOURCES.pods, failing, 'default');
    const succeeded = await done('finishes');
    expect(succeeded.status?.phase).toBe('Succeeded');
    expect(succeeded.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(succeeded.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    const failed = await done('fails');
    expect(failed.status?.phase).toBe('Failed');
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
  });
});
