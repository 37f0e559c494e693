import { RESOURCES, type Node, type Pod, type RuntimeClass } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.js';

// The plugin in a real API server, with a scheduler and a simulated kubelet (4 CPUs): what upstream's RuntimeClass
// conformance tests do, and the scheduler counting the overhead the plugin sets.

const NS = 'default';
const WAIT = { timeoutMs: 20_000 };
let plane: ControlPlane;

beforeAll(async () => {
  plane = await startControlPlane([plugin, scheduler, resourcesFit, kubelet, criSimulated, networkIpam], { config: { nodes: 1, logLevel: 'silent' } });
  await waitFor('a node', async () => (await plane.client.list<Node>(RESOURCES.nodes)).items.length === 1, WAIT);
}, 60_000);
afterAll(() => plane?.stop());

const runtimeClass = (name: string, fields: Partial<RuntimeClass> = {}): RuntimeClass => ({
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name },
  handler: 'runc',
  ...fields,
});

const pod = (name: string, runtimeClassName: string, cpu?: string): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: { runtimeClassName, containers: [{ name: 'app', image: 'pause', ...(cpu ? { resources: { requests: { cpu } } } : {}) }] },
  }) as Pod;

const scheduled = (name: string) =>
  waitFor(
    `${name} scheduled`,
    async () => {
      const current = await plane.client.get<Pod>(RESOURCES.pods, name, NS);
      return current.spec.nodeName ? current : undefined;
    },
    WAIT,
  );

describe('RuntimeClass admission in a cluster', { timeout: 60_000 }, () => {
  it('refuses a pod naming a class that does not exist, or was deleted, as Forbidden', async () => {
    await expect(plane.client.create(RESOURCES.pods, pod('none', 'nonexistent'), NS)).rejects.toMatchObject({
      status: 403,
      reason: 'Forbidden',
      message: 'pods "none" is forbidden: pod rejected: RuntimeClass "nonexistent" not found',
    });
    await plane.client.create(RESOURCES.runtimeclasses, runtimeClass('delete-me'));
    await plane.client.delete(RESOURCES.runtimeclasses, 'delete-me');
    await expect(plane.client.create(RESOURCES.pods, pod('deleted', 'delete-me'), NS)).rejects.toMatchObject({ status: 403, reason: 'Forbidden' });
  });

  it('schedules a pod of a class without overhead, and leaves spec.overhead unset', async () => {
    await plane.client.create(RESOURCES.runtimeclasses, runtimeClass('plain'));
    await plane.client.create(RESOURCES.pods, pod('plain-pod', 'plain'), NS);
    expect((await scheduled('plain-pod')).spec.overhead).toBeUndefined();
  });

  it('gives a pod its class’s overhead, at once and when scheduled', async () => {
    await plane.client.create(RESOURCES.runtimeclasses, runtimeClass('kata', { overhead: { podFixed: { cpu: '10m', memory: '1Mi' } } }));
    const created = await plane.client.create<Pod>(RESOURCES.pods, pod('kata-pod', 'kata'), NS);
    expect(created.spec.overhead).toEqual({ cpu: '10m', memory: '1Mi' });
    expect((await scheduled('kata-pod')).spec.overhead).toEqual({ cpu: '10m', memory: '1Mi' });
  });

  it('lets the scheduler count the overhead: 2 CPUs requested plus 3 of overhead do not fit on a 4-CPU node', async () => {
    await plane.client.create(RESOURCES.runtimeclasses, runtimeClass('heavy', { overhead: { podFixed: { cpu: '3' } } }));
    await plane.client.create(RESOURCES.pods, pod('heavy-pod', 'heavy', '2'), NS);
    const unschedulable = await waitFor(
      'heavy-pod unschedulable',
      async () => {
        const current = await plane.client.get<Pod>(RESOURCES.pods, 'heavy-pod', NS);
        return current.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable');
      },
      WAIT,
    );
    expect(unschedulable.message).toContain('Insufficient cpu');
    await plane.client.create(RESOURCES.pods, pod('light-pod', 'plain', '2'), NS);
    expect((await scheduled('light-pod')).spec.nodeName).toBeTruthy();
  });
});
