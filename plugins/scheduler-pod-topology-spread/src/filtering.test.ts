import { describe, expect, it } from 'vitest';
import type { NodeInfo } from '@skiff/kernel';
import { addPodToNodeInfo, buildProfile, cloneCycleState, createNodeInfo, nodeReady, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { REASON_CONSTRAINTS_NOT_MATCH, REASON_NODE_LABEL_NOT_MATCH } from './names.js';
import { createPodTopologySpread } from './plugin.js';
import { labelledPod, newState, snapshotOf, withWebPods, zoneNode, zoneSpread } from './test-support.js';

const webPod = (name: string, ...constraints: ReturnType<typeof zoneSpread>[]) => labelledPod(name, { app: 'web' }, { topologySpreadConstraints: constraints });

/** preFilter over all `nodes`, then filter on `target`. */
function filterOn(nodes: NodeInfo[], target: string, pod = webPod('p', zoneSpread(1)), plugin = createPodTopologySpread()) {
  const state = newState();
  const status = plugin.preFilter!(state, pod, snapshotOf(nodes));
  // Skip (no hard constraint): the scheduler does not call the filter, which is the same as every node passing.
  if (status && 'code' in status && status.code === 'Skip') return null;
  expect(status).toBeNull();
  return plugin.filter!(state, pod, nodes.find((info) => info.node.metadata.name === target)!);
}

describe('PodTopologySpread filter (DoNotSchedule)', () => {
  it('topology spread 2/2/2 across three zones', () => {
    const registry = new PluginRegistry();
    registry.register(createPodTopologySpread());
    const profile = buildProfile(registry);
    const nodes = ['a', 'b', 'c'].flatMap((zone) => [1, 2].map((i) => createNodeInfo(zoneNode(`${zone}-${i}`, zone))));
    const zoneOf = (name: string) => name.slice(0, 1);
    const perZone = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const pod = webPod(`web-${i}`, zoneSpread(1));
      const result = schedulePod(profile, newState(), pod, nodes);
      expect(result.nodeName).toBeDefined();
      const info = nodes.find((n) => n.node.metadata.name === result.nodeName)!;
      addPodToNodeInfo(info, { ...pod, spec: { ...pod.spec, nodeName: result.nodeName } });
      perZone.set(zoneOf(result.nodeName!), (perZone.get(zoneOf(result.nodeName!)) ?? 0) + 1);
      const counts = ['a', 'b', 'c'].map((zone) => perZone.get(zone) ?? 0);
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    }
    expect(Object.fromEntries(perZone)).toEqual({ a: 2, b: 2, c: 2 });
  });

  it('rejects a node whose zone would exceed maxSkew, and a node missing the topology key as unresolvable', () => {
    const registry = new PluginRegistry();
    registry.register(createPodTopologySpread());
    registry.register(nodeReady);
    const notReady = zoneNode('b-1', 'b');
    notReady.status!.conditions = [{ type: 'Ready', status: 'False' }];
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 2), createNodeInfo(notReady), createNodeInfo(zoneNode('bare', undefined))];
    const result = schedulePod(buildProfile(registry), newState(), webPod('p', zoneSpread(1)), nodes);
    expect(result).toMatchObject({ code: 'Unschedulable' });
    expect(result.nodeName).toBeUndefined();
    if (result.nodeName === undefined) {
      expect(result.message).toContain(`1 ${REASON_CONSTRAINTS_NOT_MATCH},`);
      expect(result.message).toContain(`1 ${REASON_NODE_LABEL_NOT_MATCH}`);
      expect(result.failures.get('a-1')).toMatchObject({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH], plugin: 'PodTopologySpread' });
      expect(result.failures.get('bare')).toMatchObject({ code: 'UnschedulableAndUnresolvable', reasons: [REASON_NODE_LABEL_NOT_MATCH] });
    }
  });

  it('allows the skew up to maxSkew', () => {
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 2), createNodeInfo(zoneNode('b-1', 'b'))];
    // a holds 2 and b 0: placing the pod in a makes the skew 3.
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(3)))).toBeNull();
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(2)))).toEqual({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH] });
  });

  it('does not count itself when its own labels do not match the selector', () => {
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 1), createNodeInfo(zoneNode('b-1', 'b'))];
    const other = labelledPod('p', { app: 'api' }, { topologySpreadConstraints: [zoneSpread(1)] });
    expect(filterOn(nodes, 'a-1', other)).toBeNull();
    expect(filterOn(nodes, 'a-1', webPod('q', zoneSpread(1)))).not.toBeNull();
  });

  it('counts only the pod namespace, and not terminating pods', () => {
    const a = withWebPods(zoneNode('a-1', 'a'), 0);
    a.pods.push(labelledPod('elsewhere', { app: 'web' }, { nodeName: 'a-1' }, 'other'));
    const leaving = labelledPod('leaving', { app: 'web' }, { nodeName: 'a-1' });
    leaving.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    a.pods.push(leaving);
    expect(filterOn([a, createNodeInfo(zoneNode('b-1', 'b'))], 'a-1')).toBeNull();
  });

  it('minDomains: with fewer eligible domains than minDomains, the global minimum is 0', () => {
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 1), withWebPods(zoneNode('b-1', 'b'), 1)];
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1)))).toBeNull();
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1, { minDomains: 2 })))).toBeNull();
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1, { minDomains: 3 })))).toEqual({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH] });
    expect(filterOn(nodes, 'b-1', webPod('p', zoneSpread(2, { minDomains: 3 })))).toBeNull();
  });

  it('minDomains makes a pod wait for more domains rather than pile up (schedulePod)', () => {
    const registry = new PluginRegistry();
    registry.register(createPodTopologySpread());
    const profile = buildProfile(registry);
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 1), withWebPods(zoneNode('b-1', 'b'), 1)];
    const result = schedulePod(profile, newState(), webPod('p', zoneSpread(1, { minDomains: 3 })), nodes);
    expect(result).toMatchObject({ code: 'Unschedulable', message: `0/2 nodes are available: 2 ${REASON_CONSTRAINTS_NOT_MATCH}.` });
    nodes.push(createNodeInfo(zoneNode('c-1', 'c')));
    expect(schedulePod(profile, newState(), webPod('p', zoneSpread(1, { minDomains: 3 })), nodes)).toMatchObject({ nodeName: 'c-1' });
  });

  it('nodeAffinityPolicy Honor (default): nodes the pod may not go to are no domain; Ignore counts them', () => {
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 1), withWebPods(zoneNode('b-1', 'b'), 1), createNodeInfo(zoneNode('c-1', 'c'))];
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a', 'b'] }] }],
        },
      },
    };
    const honouring = labelledPod('p', { app: 'web' }, { affinity, topologySpreadConstraints: [zoneSpread(1)] });
    expect(filterOn(nodes, 'a-1', honouring)).toBeNull();
    const ignoring = labelledPod('p', { app: 'web' }, { affinity, topologySpreadConstraints: [zoneSpread(1, { nodeAffinityPolicy: 'Ignore' })] });
    expect(filterOn(nodes, 'a-1', ignoring)).toEqual({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH] });
    const bySelector = labelledPod('p', { app: 'web' }, { nodeSelector: { disk: 'ssd' }, topologySpreadConstraints: [zoneSpread(1)] });
    nodes[0]!.node.metadata.labels!.disk = 'ssd';
    nodes[1]!.node.metadata.labels!.disk = 'ssd';
    expect(filterOn(nodes, 'a-1', bySelector)).toBeNull();
  });

  it('nodeTaintsPolicy Ignore (default) counts tainted nodes; Honor leaves out nodes with untolerated NoSchedule/NoExecute taints', () => {
    const taints = [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }];
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 1), withWebPods(zoneNode('b-1', 'b'), 1), createNodeInfo(zoneNode('c-1', 'c', { taints }))];
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1)))).toEqual({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH] });
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1, { nodeTaintsPolicy: 'Honor' })))).toBeNull();
    const tolerating = labelledPod(
      'p',
      { app: 'web' },
      {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }],
        topologySpreadConstraints: [zoneSpread(1, { nodeTaintsPolicy: 'Honor' })],
      },
    );
    expect(filterOn(nodes, 'a-1', tolerating)).toEqual({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH] });
    const soft = [
      withWebPods(zoneNode('a-1', 'a'), 1),
      withWebPods(zoneNode('b-1', 'b'), 1),
      createNodeInfo(zoneNode('c-1', 'c', { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] })),
    ];
    expect(filterOn(soft, 'a-1', webPod('p', zoneSpread(1, { nodeTaintsPolicy: 'Honor' })))).not.toBeNull();
  });

  it("matchLabelKeys: only pods sharing the pod's values for those keys count", () => {
    const old = { app: 'web', 'pod-template-hash': 'v1' };
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 2, old), withWebPods(zoneNode('b-1', 'b'), 0)];
    const next = (matchLabelKeys?: string[]) =>
      labelledPod('p', { app: 'web', 'pod-template-hash': 'v2' }, { topologySpreadConstraints: [zoneSpread(1, matchLabelKeys ? { matchLabelKeys } : {})] });
    expect(filterOn(nodes, 'a-1', next())).not.toBeNull();
    expect(filterOn(nodes, 'a-1', next(['pod-template-hash']))).toBeNull();
    expect(filterOn(nodes, 'a-1', next(['not-on-the-pod']))).not.toBeNull();
  });

  it('counts only nodes that carry every constraint topology key', () => {
    const hostnameSpread = { ...zoneSpread(5), topologyKey: 'kubernetes.io/hostname' };
    const nodes = [withWebPods(zoneNode('a-1', 'a', { hostname: false }), 3), createNodeInfo(zoneNode('a-2', 'a')), createNodeInfo(zoneNode('b-1', 'b'))];
    // a-1 lacks a hostname, so its three pods count for no zone: zone a holds 0 and takes the pod.
    expect(filterOn(nodes, 'a-2', webPod('p', zoneSpread(1), hostnameSpread))).toBeNull();
    expect(filterOn(nodes, 'a-2', webPod('p', zoneSpread(1)))).not.toBeNull();
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1), hostnameSpread))).toEqual({
      code: 'UnschedulableAndUnresolvable',
      reasons: [REASON_NODE_LABEL_NOT_MATCH],
    });
  });

  it('ignores ScheduleAnyway constraints and pods without constraints (its preFilter says Skip)', () => {
    const nodes = [withWebPods(zoneNode('a-1', 'a'), 5), createNodeInfo(zoneNode('b-1', 'b'))];
    expect(createPodTopologySpread().preFilter!(newState(), labelledPod('p', { app: 'web' }), snapshotOf(nodes))).toEqual({ code: 'Skip', reasons: [] });
    expect(filterOn(nodes, 'a-1', webPod('p', zoneSpread(1, { whenUnsatisfiable: 'ScheduleAnyway' })))).toBeNull();
    expect(filterOn(nodes, 'a-1', labelledPod('p', { app: 'web' }))).toBeNull();
  });

  it('addPod / removePod update a cloned state for preemption, leaving the original as it was', () => {
    const plugin = createPodTopologySpread();
    const a = withWebPods(zoneNode('a-1', 'a'), 2);
    const b = withWebPods(zoneNode('b-1', 'b'), 1);
    const pod = webPod('p', zoneSpread(1));
    const state = newState();
    plugin.preFilter!(state, pod, snapshotOf([a, b]));
    expect(plugin.filter!(state, pod, a)).not.toBeNull();

    const simulation = cloneCycleState(state);
    expect(plugin.removePod!(simulation, pod, a.pods[0]!, a)).toBeNull();
    expect(plugin.filter!(simulation, pod, a)).toBeNull();
    expect(plugin.filter!(state, pod, a)).not.toBeNull();

    const another = cloneCycleState(state);
    plugin.addPod!(another, pod, labelledPod('x', { app: 'web' }, { nodeName: 'b-1' }), b);
    plugin.addPod!(another, pod, labelledPod('y', { app: 'web' }, { nodeName: 'b-1' }), b);
    // b now holds 3 and a 2: the minimum moved to a, so b is the crowded zone.
    expect(plugin.filter!(another, pod, a)).toBeNull();
    expect(plugin.filter!(another, pod, b)).not.toBeNull();
    plugin.addPod!(another, pod, labelledPod('z', { app: 'web' }, { nodeName: 'b-1' }, 'other'), b);
    expect(plugin.filter!(another, pod, a)).toBeNull();
  });

  it('computes the counts in preFilter: filter reads no node pods', () => {
    const plugin = createPodTopologySpread();
    const a = withWebPods(zoneNode('a-1', 'a'), 2);
    const b = createNodeInfo(zoneNode('b-1', 'b'));
    const pod = webPod('p', zoneSpread(1));
    const state = newState();
    plugin.preFilter!(state, pod, snapshotOf([a, b]));
    const frozenA = {
      ...a,
      get pods(): never {
        throw new Error('filter read the pods');
      },
    };
    expect(plugin.filter!(state, pod, frozenA)).toEqual({ code: 'Unschedulable', reasons: [REASON_CONSTRAINTS_NOT_MATCH] });
  });

  it('answers an Error when preFilter did not run', () => {
    const plugin = createPodTopologySpread();
    expect(plugin.filter!(newState(), webPod('p', zoneSpread(1)), createNodeInfo(zoneNode('a-1', 'a')))).toMatchObject({ code: 'Error' });
  });

  it('answers an Error naming a selector Kubernetes would refuse', () => {
    const plugin = createPodTopologySpread();
    const bad = webPod('p', zoneSpread(1, { labelSelector: { matchExpressions: [{ key: 'app', operator: 'Near', values: ['x'] }] } }));
    const status = plugin.preFilter!(newState(), bad, snapshotOf([createNodeInfo(zoneNode('a-1', 'a'))]));
    expect(status).toMatchObject({ code: 'Error' });
    expect((status as { reasons: string[] }).reasons[0]).toContain("obtaining pod's hard topology spread constraints");
  });
});
