import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '@skiff/api';
import { buildProfile, createNodeInfo, PluginRegistry, schedulePod } from '@skiff/scheduler';
import { NODE_NAME_MISMATCH } from './names.js';
import { createNodeName } from './node-name.js';

const node = (name: string): Node => ({
  metadata: { name },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (nodeName?: string): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-p' },
  spec: { containers: [{ name: 'c', image: 'app' }], nodeName },
});

describe('NodeName', () => {
  const plugin = createNodeName();

  it('lets a pod without spec.nodeName go anywhere and one with it only to that node', () => {
    const a = createNodeInfo(node('a'));
    const b = createNodeInfo(node('b'));
    expect(plugin.filter!(new Map(), pod(), a)).toBeNull();
    expect(plugin.filter!(new Map(), pod('a'), a)).toBeNull();
    expect(plugin.filter!(new Map(), pod('a'), b)).toEqual({ code: 'UnschedulableAndUnresolvable', reasons: [NODE_NAME_MISMATCH] });
  });

  it("registers upstream's events: a node added or updated", () => {
    expect(plugin.events).toEqual([{ resource: 'Node', actions: ['Add', 'Update'] }]);
  });

  it('places a pod on the node it names, and says why when that node is missing', () => {
    const registry = new PluginRegistry();
    registry.register(plugin);
    const profile = buildProfile(registry);
    const nodes = ['a', 'b', 'c'].map((name) => createNodeInfo(node(name)));
    expect(schedulePod(profile, new Map(), pod('b'), nodes)).toMatchObject({ nodeName: 'b' });
    expect(schedulePod(profile, new Map(), pod('gone'), nodes)).toMatchObject({
      code: 'UnschedulableAndUnresolvable',
      message: "0/3 nodes are available: 3 node(s) didn't match the requested node name.",
    });
  });
});
