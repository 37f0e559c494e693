import { describe, expect, it } from 'vitest';
import { addPodToNodeInfo, NodeListSnapshot, removePodFromNodeInfo, schedulePod } from '@skiff/scheduler';
import { createInterPodAffinity } from './inter-pod-affinity.js';
import { cluster, HOSTNAME, node, pod, profileWith, scheduleAndBind, term, ZONE } from './test-support.js';

const threeNodes = () => cluster([node('node-1'), node('node-2'), node('node-3')]);

describe('InterPodAffinity filter: required anti-affinity', () => {
  it("spreads 3 replicas over 3 nodes by hostname and leaves the 4th Pending with upstream's message", () => {
    const profile = profileWith();
    const nodes = threeNodes();
    const replica = (i: number) => pod(`web-${i}`, { app: 'web' }, { antiAffinity: [term('web', HOSTNAME)] });
    const placed = [1, 2, 3].map((i) => scheduleAndBind(profile, replica(i), nodes).nodeName);
    expect(new Set(placed)).toEqual(new Set(['node-1', 'node-2', 'node-3']));

    const fourth = scheduleAndBind(profile, replica(4), nodes);
    expect(fourth).toMatchObject({
      code: 'Unschedulable',
      message: "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.",
      unschedulablePlugins: new Set(['InterPodAffinity']),
    });
  });

  it('keeps replicas apart by zone: one per zone, the third has nowhere to go', () => {
    const profile = profileWith();
    const nodes = cluster([node('a-1', { [ZONE]: 'a' }), node('a-2', { [ZONE]: 'a' }), node('b-1', { [ZONE]: 'b' }), node('b-2', { [ZONE]: 'b' })]);
    const replica = (i: number) => pod(`db-${i}`, { app: 'db' }, { antiAffinity: [term('db', ZONE)] });
    const first = scheduleAndBind(profile, replica(1), nodes).nodeName!;
    const second = scheduleAndBind(profile, replica(2), nodes).nodeName!;
    expect(first[0]).not.toBe(second[0]);
    expect(scheduleAndBind(profile, replica(3), nodes)).toMatchObject({
      message: "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules.",
    });
  });

  it('does not hold a node without the topology label against the pod', () => {
    const nodes = cluster(
      [node('z-1', { [ZONE]: 'a' }), { metadata: { name: 'bare' }, status: node('x').status }],
      [pod('db-0', { app: 'db' }, { nodeName: 'z-1' })],
    );
    const incoming = pod('db-1', { app: 'db' }, { antiAffinity: [term('db', ZONE)] });
    expect(schedulePod(profileWith(), new Map(), incoming, nodes)).toMatchObject({ nodeName: 'bare' });
  });
});

describe('InterPodAffinity filter: required affinity', () => {
  it('places a pod next to the pod it must be near (hostname)', () => {
    const nodes = cluster(
      threeNodes().map((i) => i.node),
      [pod('db', { app: 'db' }, { nodeName: 'node-2' })],
    );
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME)] });
    expect(schedulePod(profileWith(), new Map(), web, nodes)).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
  });

  it('accepts any node in the zone of a matching pod, and no node outside it', () => {
    const nodes = cluster(
      [node('a-1', { [ZONE]: 'a' }), node('a-2', { [ZONE]: 'a' }), node('b-1', { [ZONE]: 'b' })],
      [pod('cache', { app: 'cache' }, { nodeName: 'a-2' })],
    );
    const web = pod('web', { app: 'web' }, { affinity: [term('cache', ZONE)] });
    const result = schedulePod(profileWith(), new Map(), web, nodes, () => 0);
    expect(result).toMatchObject({ feasibleNodes: 2 });
    expect(['a-1', 'a-2']).toContain(result.nodeName);
  });

  it('rejects every node, unresolvably, when no pod matches and the pod does not match itself', () => {
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME)] });
    expect(schedulePod(profileWith(), new Map(), web, threeNodes())).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      message: "0/3 nodes are available: 3 node(s) didn't match pod affinity rules.",
    });
  });

  it('lets the first of a group with affinity to itself go anywhere, then keeps the rest with it', () => {
    const profile = profileWith();
    const nodes = threeNodes();
    const member = (i: number) => pod(`team-${i}`, { app: 'team' }, { affinity: [term('team', HOSTNAME)] });
    const first = scheduleAndBind(profile, member(1), nodes);
    expect(first).toMatchObject({ feasibleNodes: 3 });
    for (const i of [2, 3]) expect(scheduleAndBind(profile, member(i), nodes)).toMatchObject({ nodeName: first.nodeName, feasibleNodes: 1 });
  });

  it('applies the self-match exception only while no matching pod is counted in any domain', () => {
    // A matching pod on a node without the topology key is in no domain: the exception still applies,
    // as upstream decides it. Once one is in a domain, the pod must go there.
    const nodes = cluster([node('node-1', { [ZONE]: 'a' }), node('node-2')], [pod('team-0', { app: 'team' }, { nodeName: 'node-2' })]);
    const member = pod('team-1', { app: 'team' }, { affinity: [term('team', ZONE)] });
    expect(schedulePod(profileWith(), new Map(), member, nodes)).toMatchObject({ nodeName: 'node-1' });

    const zoned = cluster([node('node-1', { [ZONE]: 'a' }), node('node-3', { [ZONE]: 'b' })], [pod('team-0', { app: 'team' }, { nodeName: 'node-3' })]);
    expect(schedulePod(profileWith(), new Map(), member, zoned)).toMatchObject({ nodeName: 'node-3', feasibleNodes: 1 });
  });

  it('requires every topology key a term names to be on the node', () => {
    const nodes = cluster([node('node-1'), node('node-2', { [ZONE]: 'a' })], [pod('db', { app: 'db' }, { nodeName: 'node-2' })]);
    const web = pod('web', { app: 'web' }, { affinity: [term('db', ZONE), term('db', HOSTNAME)] });
    const result = schedulePod(profileWith(), new Map(), web, nodes);
    expect(result).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
  });

  it('counts a pod toward affinity only when it matches all the terms', () => {
    const nodes = cluster(
      [node('node-1'), node('node-2')],
      [pod('db', { app: 'db' }, { nodeName: 'node-1' }), pod('both', { app: 'db', tier: 'gold' }, { nodeName: 'node-2' })],
    );
    const gold = { labelSelector: { matchLabels: { tier: 'gold' } }, topologyKey: HOSTNAME };
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME), gold] });
    expect(schedulePod(profileWith(), new Map(), web, nodes)).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
  });
});

describe('InterPodAffinity filter: namespaces', () => {
  const spread = () => cluster([node('node-1'), node('node-2'), node('node-3')], [pod('db', { app: 'db' }, { nodeName: 'node-1', namespace: 'data' })]);

  it("matches only pods in the pod's own namespace when the term names none", () => {
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME)] });
    expect(schedulePod(profileWith(), new Map(), web, spread())).toMatchObject({ code: 'UnschedulableAndUnresolvable' });
    const away = pod('web', { app: 'web' }, { antiAffinity: [term('db', HOSTNAME)] });
    expect(schedulePod(profileWith(), new Map(), away, spread())).toMatchObject({ feasibleNodes: 3 });
  });

  it('matches pods in the namespaces the term lists', () => {
    const web = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME, { namespaces: ['data'] })] });
    expect(schedulePod(profileWith(), new Map(), web, spread())).toMatchObject({ nodeName: 'node-1' });
  });

  it('matches pods of every namespace with an empty namespaceSelector, without namespace labels', () => {
    const away = pod('web', { app: 'web' }, { antiAffinity: [term('db', HOSTNAME, { namespaceSelector: {} })] });
    const result = schedulePod(profileWith(), new Map(), away, spread(), () => 0);
    expect(result).toMatchObject({ feasibleNodes: 2 });
    expect(result.nodeName).not.toBe('node-1');
  });
});

describe("InterPodAffinity filter: placed pods' anti-affinity (symmetry)", () => {
  it('keeps a pod without terms off the node of a pod whose anti-affinity selects it', () => {
    const nodes = cluster(
      threeNodes().map((i) => i.node),
      [pod('loner', { app: 'loner' }, { nodeName: 'node-1', antiAffinity: [term('web', HOSTNAME)] })],
    );
    const result = schedulePod(profileWith(), new Map(), pod('web', { app: 'web' }), nodes, () => 0);
    expect(result).toMatchObject({ feasibleNodes: 2 });
    expect(result.nodeName).not.toBe('node-1');

    const alone = cluster([nodes[0]!.node], nodes[0]!.pods);
    expect(schedulePod(profileWith(), new Map(), pod('web', { app: 'web' }), alone)).toMatchObject({
      code: 'Unschedulable',
      message: "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules.",
    });
  });

  it("applies the placed pod's topology key (a whole zone) and namespaces", () => {
    const nodes = cluster(
      [node('a-1', { [ZONE]: 'a' }), node('a-2', { [ZONE]: 'a' }), node('b-1', { [ZONE]: 'b' })],
      [pod('loner', { app: 'loner' }, { nodeName: 'a-1', antiAffinity: [term('web', ZONE)] })],
    );
    expect(schedulePod(profileWith(), new Map(), pod('web', { app: 'web' }), nodes)).toMatchObject({ nodeName: 'b-1', feasibleNodes: 1 });
    // The loner's term is about its own namespace: a web pod elsewhere is not its concern.
    expect(schedulePod(profileWith(), new Map(), pod('web', { app: 'web' }, { namespace: 'other' }), nodes)).toMatchObject({ feasibleNodes: 3 });
  });

  it("reports its own anti-affinity before the placed pods' (upstream's order)", () => {
    const nodes = cluster([node('node-1')], [pod('web-0', { app: 'web' }, { nodeName: 'node-1', antiAffinity: [term('web', HOSTNAME)] })]);
    const own = pod('web-1', { app: 'web' }, { antiAffinity: [term('web', HOSTNAME)] });
    expect(schedulePod(profileWith(), new Map(), own, nodes)).toMatchObject({
      message: "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.",
    });
  });
});

describe('InterPodAffinity across cycles', () => {
  it("sees a node's pods change between cycles (what it remembers per node is dropped when the node changes)", () => {
    const profile = profileWith();
    const blocker = pod('web-0', { app: 'web' }, { nodeName: 'node-1', antiAffinity: [term('web', HOSTNAME)] });
    const nodes = cluster([node('node-1')], [blocker]);
    const spread = pod('web-1', { app: 'web' }, { antiAffinity: [term('web', HOSTNAME)] });
    const near = pod('api', { app: 'api' }, { affinity: [term('web', HOSTNAME)] });
    const plain = pod('web-2', { app: 'web' });
    expect(schedulePod(profile, new Map(), spread, nodes)).toMatchObject({ code: 'Unschedulable' });
    expect(schedulePod(profile, new Map(), near, nodes)).toMatchObject({ nodeName: 'node-1' });
    expect(schedulePod(profile, new Map(), plain, nodes)).toMatchObject({ code: 'Unschedulable' });
    removePodFromNodeInfo(nodes[0]!, blocker);
    expect(schedulePod(profile, new Map(), spread, nodes)).toMatchObject({ nodeName: 'node-1' });
    expect(schedulePod(profile, new Map(), near, nodes)).toMatchObject({ code: 'UnschedulableAndUnresolvable' });
    expect(schedulePod(profile, new Map(), plain, nodes)).toMatchObject({ nodeName: 'node-1' });
    addPodToNodeInfo(nodes[0]!, blocker);
    expect(schedulePod(profile, new Map(), spread, nodes)).toMatchObject({ code: 'Unschedulable' });
    expect(schedulePod(profile, new Map(), plain, nodes)).toMatchObject({ code: 'Unschedulable' });
  });

  it('tells apart a missing label selector (selects nothing) from an empty one (selects every pod)', () => {
    const nodes = cluster([node('node-1'), node('node-2')], [pod('any', { app: 'any' }, { nodeName: 'node-1' })]);
    const none = pod('a', { app: 'a' }, { antiAffinity: [{ topologyKey: HOSTNAME }] });
    const every = pod('b', { app: 'b' }, { antiAffinity: [{ labelSelector: {}, topologyKey: HOSTNAME }] });
    expect(schedulePod(profileWith(), new Map(), none, nodes, () => 0)).toMatchObject({ feasibleNodes: 2 });
    expect(schedulePod(profileWith(), new Map(), every, nodes)).toMatchObject({ nodeName: 'node-2', feasibleNodes: 1 });
  });
});

describe('InterPodAffinity addPod / removePod (preemption)', () => {
  const plugin = createInterPodAffinity();

  it('removing the pod an anti-affinity term matched frees its node, in the clone only', () => {
    const victim = pod('web-0', { app: 'web' }, { nodeName: 'node-1' });
    const nodes = cluster([node('node-1')], [victim]);
    const incoming = pod('web-1', { app: 'web' }, { antiAffinity: [term('web', HOSTNAME)] });
    const state = new Map<string, unknown>();
    expect(plugin.preFilter!(state, incoming, new NodeListSnapshot(nodes))).toBeNull();
    expect(plugin.filter!(state, incoming, nodes[0]!)).toMatchObject({ reasons: ["node(s) didn't match pod anti-affinity rules"] });

    const simulated = new Map([...state].map(([key, value]) => [key, (value as { clone(): unknown }).clone()]));
    expect(plugin.removePod!(simulated, incoming, victim, nodes[0]!)).toBeNull();
    expect(plugin.filter!(simulated, incoming, nodes[0]!)).toBeNull();
    expect(plugin.filter!(state, incoming, nodes[0]!)).not.toBeNull();
  });

  it('adding a pod with anti-affinity against the incoming pod closes its node; removing it reopens it', () => {
    const nodes = cluster([node('node-1'), node('node-2')]);
    const incoming = pod('web', { app: 'web' });
    const nominated = pod('loner', { app: 'loner' }, { antiAffinity: [term('web', HOSTNAME)] });
    const state = new Map<string, unknown>();
    plugin.preFilter!(state, incoming, new NodeListSnapshot(nodes));
    expect(plugin.addPod!(state, incoming, nominated, nodes[0]!)).toBeNull();
    expect(plugin.filter!(state, incoming, nodes[0]!)).toMatchObject({ reasons: ["node(s) didn't satisfy existing pods anti-affinity rules"] });
    expect(plugin.filter!(state, incoming, nodes[1]!)).toBeNull();
    plugin.removePod!(state, incoming, nominated, nodes[0]!);
    expect(plugin.filter!(state, incoming, nodes[0]!)).toBeNull();
  });

  it('adding a matching pod satisfies affinity on its node', () => {
    const nodes = cluster([node('node-1'), node('node-2')], [pod('db-0', { app: 'db' }, { nodeName: 'node-2' })]);
    const incoming = pod('web', { app: 'web' }, { affinity: [term('db', HOSTNAME)] });
    const state = new Map<string, unknown>();
    plugin.preFilter!(state, incoming, new NodeListSnapshot(nodes));
    expect(plugin.filter!(state, incoming, nodes[0]!)).toMatchObject({ code: 'UnschedulableAndUnresolvable' });
    plugin.addPod!(state, incoming, pod('db-1', { app: 'db' }), nodes[0]!);
    expect(plugin.filter!(state, incoming, nodes[0]!)).toBeNull();
  });

  it('answers an Error when preFilter did not run', () => {
    const nodes = cluster([node('node-1')]);
    expect(plugin.filter!(new Map(), pod('web', {}), nodes[0]!)).toMatchObject({ code: 'Error' });
    expect(plugin.addPod!(new Map(), pod('web', {}), pod('x', {}), nodes[0]!)).toMatchObject({ code: 'Error' });
  });
});

describe('InterPodAffinity preFilter', () => {
  it('rejects a pod whose selector does not parse, unresolvably, saying why', () => {
    const bad = pod('web', { app: 'web' }, { affinity: [{ labelSelector: { matchExpressions: [{ key: 'app', operator: 'Near' }] }, topologyKey: HOSTNAME }] });
    const result = schedulePod(profileWith(), new Map(), bad, threeNodes());
    expect(result).toMatchObject({ code: 'UnschedulableAndUnresolvable', message: expect.stringMatching(/^0\/3 nodes are available: parsing pod: .*Near/) });
  });

  it('visits only nodes holding pods with required anti-affinity when the pod has no required terms', () => {
    const nodes = cluster([node('node-1'), node('node-2')], [pod('web-0', { app: 'web' }, { nodeName: 'node-1' })]);
    const plain = nodes[0]!;
    const guarded = {
      get pods(): never {
        throw new Error('walked every pod');
      },
    };
    Object.defineProperty(plain, 'pods', guarded);
    const state = new Map<string, unknown>();
    expect(createInterPodAffinity().preFilter!(state, pod('web', { app: 'web' }), new NodeListSnapshot(nodes))).toBeNull();
    expect(createInterPodAffinity().filter!(state, pod('web', { app: 'web' }), nodes[1]!)).toBeNull();
  });
});
