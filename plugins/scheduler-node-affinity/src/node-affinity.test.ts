import { describe, expect, it } from 'vitest';
import type { NodeSelectorTerm, Node, Pod, PodSpec, PreferredSchedulingTerm } from '@skiff/api';
import type { SchedulerPlugin } from '@skiff/kernel';
import { buildProfile, createNodeInfo, NodeListSnapshot, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { NODE_AFFINITY_REASON } from './names.js';
import { createNodeAffinity } from './node-affinity.js';

const node = (name: string, labels: Record<string, string> = {}): Node => ({
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (spec: Partial<PodSpec> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: { containers: [{ name: 'c', image: 'app' }], ...spec },
});
const requiredPod = (...terms: NodeSelectorTerm[]) =>
  pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
const preferredPod = (...terms: PreferredSchedulingTerm[]) => pod({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: terms } } });
const zone = (value: string): NodeSelectorTerm => ({ matchExpressions: [{ key: 'zone', operator: 'In', values: [value] }] });
const named = (...names: string[]): NodeSelectorTerm => ({ matchFields: names.map((name) => ({ key: 'metadata.name', operator: 'In', values: [name] })) });
const namedAny = (...names: string[]): NodeSelectorTerm => ({ matchFields: [{ key: 'metadata.name', operator: 'In', values: names }] });

function profileWith(plugin: SchedulerPlugin, args?: Record<string, unknown>) {
  const registry = new PluginRegistry();
  registry.register(plugin);
  return buildProfile(registry, args ? { pluginConfig: [{ name: 'NodeAffinity', args }] } : {});
}

describe('NodeAffinity filter', () => {
  const plugin = createNodeAffinity();
  const filter = (p: Pod, n: Node) => plugin.filter!(new Map(), p, createNodeInfo(n));

  it('checks nodeSelector and required node affinity, unresolvably, in kube-scheduler words', () => {
    expect(filter(pod({ nodeSelector: { disk: 'ssd' } }), node('a', { disk: 'ssd' }))).toBeNull();
    expect(filter(pod({ nodeSelector: { disk: 'ssd' } }), node('a', { disk: 'hdd' }))).toEqual({
      code: 'UnschedulableAndUnresolvable',
      reasons: ["node(s) didn't match Pod's node affinity/selector"],
    });
    expect(filter(requiredPod(zone('a'), zone('b')), node('n', { zone: 'b' }))).toBeNull();
    expect(filter(requiredPod(zone('a'), zone('b')), node('n', { zone: 'c' }))?.reasons).toEqual([NODE_AFFINITY_REASON.POD]);
    // Both must hold.
    expect(
      filter({ ...requiredPod(zone('a')), spec: { ...requiredPod(zone('a')).spec, nodeSelector: { disk: 'ssd' } } }, node('n', { zone: 'a' })),
    ).not.toBeNull();
  });

  it("enforces the profile's addedAffinity on every pod, with its own reason", () => {
    const enforced = createNodeAffinity().withArgs!({ addedAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [zone('a')] } } });
    expect(enforced.filter!(new Map(), pod(), createNodeInfo(node('n', { zone: 'a' })))).toBeNull();
    expect(enforced.filter!(new Map(), pod(), createNodeInfo(node('n', { zone: 'b' })))).toEqual({
      code: 'UnschedulableAndUnresolvable',
      reasons: ["node(s) didn't match scheduler-enforced node affinity"],
    });
    expect(enforced.preFilter!(new Map(), pod(), new NodeListSnapshot([]))).toBeNull();
  });
});

describe('NodeAffinity preFilter', () => {
  const preFilter = (p: Pod) => createNodeAffinity().preFilter!(new Map(), p, new NodeListSnapshot([]));

  it('skips a pod with no selector, no required affinity and no added affinity', () => {
    expect(preFilter(pod())).toEqual({ code: 'Skip', reasons: [] });
    expect(preFilter(pod({ nodeSelector: { a: 'b' } }))).toBeNull();
  });

  it('narrows to the named nodes when every term names them, as upstream (the union of terms, the intersection within one)', () => {
    expect(preFilter(requiredPod(named('a')))).toEqual({ nodeNames: new Set(['a']) });
    expect(preFilter(requiredPod(named('a'), namedAny('b', 'c')))).toEqual({ nodeNames: new Set(['a', 'b', 'c']) });
    expect(preFilter(requiredPod({ matchFields: [...namedAny('a', 'b').matchFields!, ...namedAny('b', 'c').matchFields!] }))).toEqual({
      nodeNames: new Set(['b']),
    });
    expect(preFilter(requiredPod(named('a'), zone('x')))).toBeNull();
    expect(preFilter(requiredPod(named('a', 'b')))).toEqual({ code: 'UnschedulableAndUnresolvable', reasons: ['pod affinity terms conflict'] });
  });
});

describe('NodeAffinity score', () => {
  function scores(plugin: SchedulerPlugin, p: Pod, nodes: Node[]): Record<string, number> {
    const state = new Map<string, unknown>();
    const infos = nodes.map((n) => createNodeInfo(n));
    const status = plugin.preScore!(state, p, infos, new NodeListSnapshot(infos));
    // Skip (nothing preferred): the scheduler leaves the score out, the same as every node scoring 0.
    if (status?.code === 'Skip') return Object.fromEntries(infos.map((info) => [info.node.metadata.name!, 0]));
    expect(status).toBeNull();
    const raw = new Map(infos.map((info) => [info.node.metadata.name!, plugin.score!(state, p, info)]));
    plugin.normalizeScore!(state, p, raw);
    return Object.fromEntries(raw);
  }
  const nodes = [node('a', { zone: 'a', disk: 'ssd' }), node('b', { zone: 'b', disk: 'ssd' }), node('c', { zone: 'c' })];

  it('sums the weights of matched preferred terms and scales the best to 100', () => {
    const p = preferredPod(
      { weight: 5, preference: zone('a') },
      { weight: 3, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
    );
    // raw: a 8, b 3, c 0
    expect(scores(createNodeAffinity(), p, nodes)).toEqual({ a: 100, b: 37, c: 0 });
    expect(scores(createNodeAffinity(), pod(), nodes)).toEqual({ a: 0, b: 0, c: 0 });
  });

  it("adds the profile's preferred terms to the pod's", () => {
    const plugin = createNodeAffinity().withArgs!({
      addedAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: zone('c') }] },
    });
    expect(scores(plugin, preferredPod({ weight: 5, preference: zone('a') }), nodes)).toEqual({ a: 50, b: 0, c: 100 });
  });

  it("has upstream's weight and events", () => {
    expect(createNodeAffinity().defaultWeight).toBe(2);
    expect(createNodeAffinity().events).toEqual([{ resource: 'Node', actions: ['Add', 'Update'] }]);
  });
});

describe('NodeAffinity args (NodeAffinityArgs)', () => {
  it('refuses a term Kubernetes cannot parse, naming the field', () => {
    const plugin = createNodeAffinity();
    expect(() =>
      plugin.withArgs!({
        addedAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] }],
          },
        },
      }),
    ).toThrow(
      'addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["a","b"]: must have one element',
    );
    expect(() =>
      plugin.withArgs!({
        addedAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, preference: { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['v'] }] } }],
        },
      }),
    ).toThrow('addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values: Forbidden');
    expect(() => plugin.withArgs!({ addedAffinity: { required: {} } })).toThrow('unknown option "args.addedAffinity.required"');
  });

  it('fails a profile whose pluginConfig args are wrong', () => {
    expect(() => profileWith(createNodeAffinity(), { addedAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 'high' }] } })).toThrow(
      /NodeAffinity/,
    );
  });
});

describe('NodeAffinity in a scheduling cycle', () => {
  it('places a pod by its required and preferred affinity and words the failure as kube-scheduler', () => {
    const profile = profileWith(createNodeAffinity());
    expect(profile.score).toEqual([{ plugin: expect.objectContaining({ name: 'NodeAffinity' }), weight: 2 }]);
    const infos = [node('a', { zone: 'a' }), node('b1', { zone: 'b' }), node('b2', { zone: 'b', disk: 'ssd' })].map((n) => createNodeInfo(n));
    const p = {
      ...requiredPod(zone('b')),
    };
    p.spec.affinity!.nodeAffinity!.preferredDuringSchedulingIgnoredDuringExecution = [
      { weight: 1, preference: { matchExpressions: [{ key: 'disk', operator: 'Exists' }] } },
    ];
    expect(schedulePod(profile, new Map(), p, infos)).toMatchObject({ nodeName: 'b2' });
    expect(schedulePod(profile, new Map(), requiredPod(zone('z')), infos)).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
    });
  });

  it("goes to the node a DaemonSet pod's metadata.name term names, filtering only that node", () => {
    const plugin = createNodeAffinity();
    const profile = profileWith(plugin);
    const infos = ['n1', 'n2', 'n3'].map((name) => createNodeInfo(node(name)));
    expect(schedulePod(profile, new Map(), requiredPod(named('n3')), infos)).toMatchObject({ nodeName: 'n3' });
    // Only the named node is filtered: a filter that rejects every node sees just n3.
    const seen: string[] = [];
    const registry = new PluginRegistry();
    registry.register(plugin);
    registry.register({ name: 'Witness', filter: (_state, _pod, info) => (seen.push(info.node.metadata.name!), null) });
    expect(schedulePod(buildProfile(registry), new Map(), requiredPod(named('n3')), infos)).toMatchObject({ nodeName: 'n3' });
    expect(seen).toEqual(['n3']);
    // A node named nowhere in the cluster places the pod nowhere (upstream 1.28 reports "nodeinfo not found").
    expect(schedulePod(profile, new Map(), requiredPod(named('gone')), infos)).not.toHaveProperty('nodeName');
  });

  it("applies a profile's addedAffinity from its pluginConfig", () => {
    const profile = profileWith(createNodeAffinity(), {
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'NodeAffinityArgs',
      addedAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['batch'] }] }] },
      },
    });
    const infos = [node('web', { pool: 'web' }), node('batch', { pool: 'batch' })].map((n) => createNodeInfo(n));
    expect(schedulePod(profile, new Map(), pod(), infos)).toMatchObject({ nodeName: 'batch' });
    expect(schedulePod(profile, new Map(), pod(), infos.slice(0, 1))).toMatchObject({
      message: "0/1 nodes are available: 1 node(s) didn't match scheduler-enforced node affinity.",
    });
  });
});
