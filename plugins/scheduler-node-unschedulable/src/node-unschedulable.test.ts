import { describe, expect, it } from 'vitest';
import type { Node, Pod, Toleration } from '@skiff/api';
import { buildProfile, createNodeInfo, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { NODE_UNSCHEDULABLE_REASON } from './names.js';
import { createNodeUnschedulable } from './node-unschedulable.js';

const node = (name: string, unschedulable = false): Node => ({
  metadata: { name },
  spec: unschedulable ? { unschedulable: true } : {},
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (tolerations?: Toleration[]): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: { containers: [{ name: 'c', image: 'app' }], tolerations },
});

describe('NodeUnschedulable', () => {
  const plugin = createNodeUnschedulable();
  const cordoned = createNodeInfo(node('cordoned', true));

  it('rejects a cordoned node for a pod without the toleration, unresolvably', () => {
    expect(plugin.filter!(new Map(), pod(), createNodeInfo(node('open')))).toBeNull();
    expect(plugin.filter!(new Map(), pod(), cordoned)).toEqual({ code: 'UnschedulableAndUnresolvable', reasons: [NODE_UNSCHEDULABLE_REASON] });
  });

  it('admits pods tolerating node.kubernetes.io/unschedulable:NoSchedule (by key, by Exists, by any effect)', () => {
    expect(plugin.filter!(new Map(), pod([{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }]), cordoned)).toBeNull();
    expect(plugin.filter!(new Map(), pod([{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }]), cordoned)).toBeNull();
    expect(plugin.filter!(new Map(), pod([{ operator: 'Exists' }]), cordoned)).toBeNull();
    expect(plugin.filter!(new Map(), pod([{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }]), cordoned)).not.toBeNull();
    expect(plugin.filter!(new Map(), pod([{ key: 'other', operator: 'Exists' }]), cordoned)).not.toBeNull();
  });

  it("registers upstream's events: a node added, or its taints (and cordon) changed", () => {
    expect(plugin.events).toEqual([{ resource: 'Node', actions: ['Add', 'UpdateNodeTaint'] }]);
  });

  it('places a pod on the one node not cordoned, and words the failure as kube-scheduler', () => {
    const registry = new PluginRegistry();
    registry.register(plugin);
    const profile = buildProfile(registry);
    const nodes = [node('a', true), node('b'), node('c', true)].map((n) => createNodeInfo(n));
    expect(schedulePod(profile, new Map(), pod(), nodes)).toMatchObject({ nodeName: 'b' });
    expect(schedulePod(profile, new Map(), pod(), [nodes[0]!, nodes[2]!])).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      message: '0/2 nodes are available: 2 node(s) were unschedulable.',
    });
  });
});
