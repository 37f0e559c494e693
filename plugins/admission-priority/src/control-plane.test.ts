import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod, type PriorityClass } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin from './index.js';

const pod = (name: string, spec: Partial<Pod['spec']> = {}): Pod =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec } }) as Pod;

const priorityClass = (name: string, value: number, globalDefault = false): PriorityClass => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  globalDefault,
});

describe('Priority admission in a control plane', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([plugin], { enabled: [] });
  });
  afterAll(() => plane?.stop());

  it('creates the system classes at start, through the API', async () => {
    const { items } = await plane.client.list<PriorityClass>(RESOURCES.priorityclasses);
    const system = Object.fromEntries(items.map((pc) => [pc.metadata.name, pc.value]));
    expect(system).toEqual({ 'system-node-critical': 2_000_001_000, 'system-cluster-critical': 2_000_000_000 });
    expect(items.every((pc) => pc.metadata.uid && pc.preemptionPolicy === 'PreemptLowerPriority' && !pc.globalDefault)).toBe(true);
  });

  it('gives pods the value of the class they name, written a moment before', async () => {
    await plane.client.create(RESOURCES.priorityclasses, priorityClass('fresh', 500));
    const created = await plane.client.create<Pod>(RESOURCES.pods, pod('named', { priorityClassName: 'fresh' }), 'default');
    expect(created.spec.priority).toBe(500);
    const critical = await plane.client.create<Pod>(RESOURCES.pods, pod('critical', { priorityClassName: 'system-node-critical' }), 'default');
    expect(critical.spec.priority).toBe(2_000_001_000);
  });

  it('uses the one global default for pods naming no class, and refuses a second default', async () => {
    expect((await plane.client.create<Pod>(RESOURCES.pods, pod('before'), 'default')).spec.priority).toBe(0);
    await plane.client.create(RESOURCES.priorityclasses, priorityClass('standard', 100, true));
    await expect(plane.client.create(RESOURCES.priorityclasses, priorityClass('another', 200, true))).rejects.toThrow(
      'priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass standard is already marked as default. Only one default can exist',
    );
    const fresh = await plane.client.get<PriorityClass>(RESOURCES.priorityclasses, 'fresh');
    await expect(plane.client.update(RESOURCES.priorityclasses, { ...fresh, globalDefault: true })).rejects.toThrow('already marked as default');
    const after = await waitFor('pods to get the new default', async () => {
      const created = await plane.client.create<Pod>(RESOURCES.pods, { ...pod(''), metadata: { generateName: 'after-' } }, 'default');
      return created.spec.priority === 100 ? created : undefined;
    });
    expect(after.spec.priorityClassName).toBe('standard');
    await plane.client.delete(RESOURCES.priorityclasses, 'standard');
    await waitFor(
      'pods to get 0 again',
      async () => (await plane.client.create<Pod>(RESOURCES.pods, { ...pod(''), metadata: { generateName: 'gone-' } }, 'default')).spec.priority === 0,
    );
  });

  it('keeps the system classes: no delete, no new value', async () => {
    await expect(plane.client.delete(RESOURCES.priorityclasses, 'system-cluster-critical')).rejects.toThrow(
      'priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
    const current = await plane.client.get<PriorityClass>(RESOURCES.priorityclasses, 'system-cluster-critical');
    await expect(plane.client.update(RESOURCES.priorityclasses, { ...current, value: 5 })).rejects.toThrow(/value/);
    await expect(plane.client.create(RESOURCES.priorityclasses, priorityClass('system-mine', 10))).rejects.toThrow(/reserved for system use/);
  });
});
