import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError, RESOURCES, type Node, type Pod } from '@skiff/api';
import type { ApiClient, SchedulerHandle } from '@skiff/kernel';
import { buildProfile, createNodeInfo, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import { createDefaultBinder } from './default-binder.js';

function node(name: string): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function pod(name: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'nginx' }] } };
}

// A real API server (no scheduler running): the binder's POST goes through the full request pipeline.
let plane: ControlPlane;
let client: ApiClient;
beforeAll(async () => {
  plane = await startControlPlane([], { config: { logLevel: 'silent' } });
  client = plane.client;
  for (const name of ['node-1', 'node-2']) await client.create(RESOURCES.nodes, node(name));
});
afterAll(() => plane?.stop());

/** The binder initialised with the API client, as the scheduler's handle gives it. */
function binder() {
  const plugin = createDefaultBinder();
  void plugin.init!({ client } as Pick<SchedulerHandle, 'client'> as SchedulerHandle);
  return plugin;
}

describe('DefaultBinder', () => {
  it('binds the node a profile chose: spec.nodeName is set by the API server', async () => {
    const registry = new PluginRegistry();
    registry.register(createDefaultBinder());
    const profile = buildProfile(registry);
    expect(profile.bind.map((p) => p.name)).toEqual(['DefaultBinder']);
    void profile.bind[0]!.init!({ client } as Pick<SchedulerHandle, 'client'> as SchedulerHandle);

    const web = await client.create<Pod>(RESOURCES.pods, pod('web'), 'default');
    const busy = createNodeInfo(node('node-1'), [{ ...pod('other'), spec: { ...pod('other').spec, nodeName: 'node-1' } }]);
    const decision = schedulePod(profile, new Map(), web, [busy, createNodeInfo(node('node-2'))], () => 0);
    expect(decision.nodeName).toBeDefined();
    await expect(profile.bind[0]!.bind!(new Map(), web, decision.nodeName!)).resolves.toBeNull();
    const bound = await client.get<Pod>(RESOURCES.pods, 'web', 'default');
    expect(bound.spec.nodeName).toBe(decision.nodeName);
  });

  it('lets API errors propagate: a pod already bound, a pod that is gone', async () => {
    const plugin = binder();
    const api = await client.create<Pod>(RESOURCES.pods, pod('api'), 'default');
    await plugin.bind!(new Map(), api, 'node-1');
    const again = plugin.bind!(new Map(), api, 'node-2');
    await expect(again).rejects.toSatisfy((err: unknown) => isApiError(err, 'Conflict'));
    await expect(plugin.bind!(new Map(), pod('never-created'), 'node-1')).rejects.toSatisfy((err: unknown) => isApiError(err, 'NotFound'));
    expect((await client.get<Pod>(RESOURCES.pods, 'api', 'default')).spec.nodeName).toBe('node-1');
  });

  it('refuses to bind the same name with another uid (the pod was recreated)', async () => {
    const plugin = binder();
    const first = await client.create<Pod>(RESOURCES.pods, pod('recreated'), 'default');
    await client.delete(RESOURCES.pods, 'recreated', 'default', { gracePeriodSeconds: 0 });
    await client.create<Pod>(RESOURCES.pods, pod('recreated'), 'default');
    await expect(plugin.bind!(new Map(), first, 'node-1')).rejects.toThrow(/Precondition failed: UID in precondition/);
    expect((await client.get<Pod>(RESOURCES.pods, 'recreated', 'default')).spec.nodeName).toBeUndefined();
  });

  it('says so when used without init', async () => {
    await expect(createDefaultBinder().bind!(new Map(), pod('p'), 'node-1')).rejects.toThrow(
      'binding pod default/p to node-1: the plugin was not initialised with a client',
    );
  });
});
