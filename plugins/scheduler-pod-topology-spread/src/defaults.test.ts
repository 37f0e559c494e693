import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Node, type Pod, type ReplicaSet, type ReplicationController, type StatefulSet } from '@skiff/api';
import { SharedInformerFactory } from '@skiff/client';
import type { ApiClient } from '@skiff/kernel';
import schedulerPlugin from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { defaultSelector, selectorSources } from './default-selector.js';
import podTopologySpread from './index.js';
import { REASON_CONSTRAINTS_NOT_MATCH } from './names.js';

// A real API server and scheduler: the cluster default constraints read Services and controllers through
// the scheduler's informers (init), and a second profile configures List defaults through pluginConfig.
const LIST_PROFILE = 'spread-by-list';

let plane: ControlPlane;
let client: ApiClient;
beforeAll(async () => {
  const profiles = [
    { schedulerName: 'default-scheduler' },
    {
      schedulerName: LIST_PROFILE,
      pluginConfig: [
        {
          name: 'PodTopologySpread',
          args: {
            defaultingType: 'List',
            defaultConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }],
          },
        },
      ],
    },
  ];
  plane = await startControlPlane([[schedulerPlugin, { profiles, thread: 'main' }], podTopologySpread], { config: { logLevel: 'silent' } });
  client = plane.client;
  for (const zone of ['a', 'b', 'c']) await client.create(RESOURCES.nodes, node(`node-${zone}`, zone));
});
afterAll(() => plane?.stop());

function node(name: string, zone: string, ready = true): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone } },
    spec: {},
    status: {
      allocatable: { cpu: '8', memory: '16Gi', pods: 110 },
      capacity: { cpu: '8', memory: '16Gi', pods: 110 },
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  };
}

type Owner = { apiVersion?: string; kind?: string; metadata: { name?: string; uid?: string } };

function pod(name: string, labels: Record<string, string>, extra: { owner?: Owner; schedulerName?: string; nodeName?: string } = {}): Pod {
  const { owner, schedulerName, nodeName } = extra;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels,
      ...(owner
        ? { ownerReferences: [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true }] }
        : {}),
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(schedulerName ? { schedulerName } : {}), ...(nodeName ? { nodeName } : {}) },
  };
}

const boundNode = (name: string) => waitFor(`${name} to be bound`, async () => (await client.get<Pod>(RESOURCES.pods, name, 'default')).spec.nodeName);

describe('cluster default constraints', () => {
  it('System: the pods of a ReplicaSet, which set no constraints, spread 2/2/2 over three zones', async () => {
    const replicaSet = await client.create<ReplicaSet>(
      RESOURCES.replicasets,
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
      'default',
    );
    const zones = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      await client.create(RESOURCES.pods, pod(`web-${i}`, { app: 'web' }, { owner: replicaSet }), 'default');
      const nodeName = await boundNode(`web-${i}`);
      zones.set(nodeName, (zones.get(nodeName) ?? 0) + 1);
    }
    expect(Object.fromEntries(zones)).toEqual({ 'node-a': 2, 'node-b': 2, 'node-c': 2 });
  });

  it("List: a Service's pods get the DoNotSchedule default, with upstream's reason when no zone may take them", async () => {
    await client.create(RESOURCES.nodes, node('node-d', 'd', false));
    await client.create(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'default' }, spec: { selector: { app: 'db' }, ports: [{ port: 5432 }] } },
      'default',
    );
    // Zone d holds no db pod and its node is not ready: the minimum stays 0, so a db pod fits nowhere with one already in a, b and c.
    for (const zone of ['a', 'b', 'c']) await client.create(RESOURCES.pods, pod(`db-${zone}`, { app: 'db' }, { nodeName: `node-${zone}` }), 'default');
    // A pod no Service or controller selects gets no default constraint. Once it is bound, the scheduler has
    // seen the db pods created before it (one watch, in order), and the node and Service created earlier still.
    await client.create(RESOURCES.pods, pod('loner', { app: 'loner' }, { schedulerName: LIST_PROFILE }), 'default');
    expect(await boundNode('loner')).toMatch(/^node-[abc]$/);

    await client.create(RESOURCES.pods, pod('db-next', { app: 'db' }, { schedulerName: LIST_PROFILE }), 'default');
    const condition = await waitFor('db-next to be unschedulable', async () =>
      (await client.get<Pod>(RESOURCES.pods, 'db-next', 'default')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False'),
    );
    expect(condition?.message).toContain(`3 ${REASON_CONSTRAINTS_NOT_MATCH}`);
    expect((await client.get<Pod>(RESOURCES.pods, 'db-next', 'default')).spec.nodeName).toBeUndefined();
  });

  it("selects by the Services that select the pod and its controller's selector (StatefulSet, ReplicationController)", async () => {
    const template = (labels: Record<string, string>) => ({ metadata: { labels }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const statefulSet = await client.create<StatefulSet>(
      RESOURCES.statefulsets,
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'cache', namespace: 'default' },
        spec: {
          replicas: 0,
          serviceName: 'cache',
          selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['cache'] }] },
          template: template({ tier: 'cache' }),
        },
      },
      'default',
    );
    const controller = await client.create<ReplicationController>(
      RESOURCES.replicationcontrollers,
      {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'legacy', namespace: 'default' },
        spec: { replicas: 0, selector: { era: 'old' }, template: template({ era: 'old' }) },
      },
      'default',
    );
    await client.create(
      RESOURCES.services,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'front', namespace: 'default' }, spec: { selector: { role: 'front' }, ports: [{ port: 80 }] } },
      'default',
    );
    const informers = new SharedInformerFactory(client, { resyncMs: 0 });
    const sources = selectorSources(informers);
    const stop = new AbortController();
    informers.start(stop.signal);
    try {
      await informers.waitForSync();
      const select = (labels: Record<string, string>, owner?: Owner) => defaultSelector(pod('x', labels, owner ? { owner } : {}), sources).toString();
      expect(select({ tier: 'cache', role: 'front' }, statefulSet)).toBe('role=front,tier in (cache)');
      expect(select({ era: 'old' }, controller)).toBe('era=old');
      expect(select({ app: 'db' })).toBe('app=db');
      expect(select({ app: 'nobody' })).toBe('');
    } finally {
      stop.abort();
      await informers.stopped();
    }
  });
});
