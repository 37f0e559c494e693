import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Namespace } from '@skiff/api';
import { SharedInformerFactory } from '@skiff/client';
import type { SchedulerHandle } from '@skiff/kernel';
import { schedulePod } from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { createInterPodAffinity } from './inter-pod-affinity.js';
import { cluster, HOSTNAME, node, pod, profileWith, term } from './test-support.js';

// namespaceSelector needs namespace labels: the plugin reads them from the namespace informer it takes in
// init, here over a real API server, started (as the scheduler does) after init.
let plane: ControlPlane;
let informers: SharedInformerFactory;
const stop = new AbortController();
let profile: ReturnType<typeof profileWith>;

const namespace = (name: string, labels: Record<string, string>): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

beforeAll(async () => {
  plane = await startControlPlane([], { enabled: [], config: { logLevel: 'silent' } });
  for (const [name, team] of [
    ['team-a', 'a'],
    ['team-b', 'b'],
    ['ops', 'ops'],
  ] as const) {
    await plane.client.create(RESOURCES.namespaces, namespace(name, { team }));
  }
  informers = new SharedInformerFactory(plane.client, { resyncMs: 0 });
  profile = profileWith(createInterPodAffinity());
  // As the scheduler does: init on the profile's own instances (they use only the handle's informers).
  for (const plugin of profile.plugins) await plugin.init?.({ informers } as unknown as SchedulerHandle);
  informers.start(stop.signal);
  await informers.waitForSync();
});

afterAll(async () => {
  stop.abort();
  await informers?.stopped();
  await plane?.stop();
});

const teamA = { namespaceSelector: { matchLabels: { team: 'a' } } };

describe('InterPodAffinity with namespaceSelector', () => {
  it("matches pods in the namespaces whose labels the incoming pod's term selects", () => {
    const nodes = cluster(
      [node('node-1'), node('node-2'), node('node-3')],
      [pod('db-b', { app: 'db' }, { nodeName: 'node-1', namespace: 'team-b' }), pod('db-a', { app: 'db' }, { nodeName: 'node-2', namespace: 'team-a' })],
    );
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME, teamA)] });
    expect(schedulePod(profile, new Map(), web, nodes)).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
    const away = pod('web', { app: 'web' }, { antiAffinity: [term('db', HOSTNAME, teamA)] });
    expect(schedulePod(profile, new Map(), away, nodes, () => 0)).toMatchObject({ feasibleNodes: 2 });
  });

  it("keeps a pod off a placed pod's node when that pod's anti-affinity selects the pod's namespace by its labels", () => {
    const nodes = cluster(
      [node('node-1'), node('node-2')],
      [pod('guard', { app: 'guard' }, { nodeName: 'node-1', namespace: 'ops', antiAffinity: [term('web', HOSTNAME, teamA)] })],
    );
    const fromA = pod('web', { app: 'web' }, { namespace: 'team-a' });
    expect(schedulePod(profile, new Map(), fromA, nodes)).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
    expect(schedulePod(profile, new Map(), fromA, [nodes[0]!])).toMatchObject({
      message: "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.",
    });
    expect(schedulePod(profile, new Map(), pod('web', { app: 'web' }, { namespace: 'team-b' }), nodes, () => 0)).toMatchObject({ feasibleNodes: 2 });
  });

  it('scores by namespaceSelector too', () => {
    const nodes = cluster([node('node-1'), node('node-2')], [pod('db-a', { app: 'db' }, { nodeName: 'node-1', namespace: 'team-a' })]);
    const web = pod('web', { app: 'web' }, { preferredAffinity: [{ weight: 10, podAffinityTerm: term('db', HOSTNAME, teamA) }] });
    expect(schedulePod(profile, new Map(), web, nodes, () => 0.99)).toMatchObject({ nodeName: 'node-1', score: 200 });
  });

  it('follows namespace label changes as the informer sees them', async () => {
    const nodes = cluster([node('node-1'), node('node-2')], [pod('db-b', { app: 'db' }, { nodeName: 'node-1', namespace: 'team-b' })]);
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME, teamA)] });
    expect(schedulePod(profile, new Map(), web, nodes)).toMatchObject({ code: 'UnschedulableAndUnresolvable' });
    await plane.client.patch(RESOURCES.namespaces, 'team-b', { metadata: { labels: { team: 'a' } } });
    await waitFor(
      'the informer to see team-b relabelled',
      () => informers.informer<Namespace>(RESOURCES.namespaces).get('team-b')?.metadata.labels?.team === 'a',
    );
    expect(schedulePod(profile, new Map(), web, nodes)).toMatchObject({ nodeName: 'node-1' });
  });
});
