import { describe, expect, it } from 'vitest';
import type { ContainerPort, Node, Pod } from '@skiff/api';
import { addPodToNodeInfo, buildProfile, createNodeInfo, PluginRegistry, removePodFromNodeInfo, schedulePod } from '@skiff/scheduler';
import { podHostPorts } from './host-ports.js';
import { NODE_PORTS_REASON } from './names.js';
import { createNodePorts } from './node-ports.js';

const node = (name: string): Node => ({
  metadata: { name },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: 110 }, conditions: [{ type: 'Ready', status: 'True' }] },
});
const pod = (name: string, ...ports: ContainerPort[]): Pod => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { containers: [{ name: 'c', image: 'app', ports }] },
});
const port = (hostPort: number, protocol?: string, hostIP?: string): ContainerPort => ({ containerPort: 8080, hostPort, protocol, hostIP });

/** The filter's answer for `incoming` on a node running `placed`, preFilter run first as the scheduler does. */
function fits(incoming: Pod, ...placed: Pod[]): boolean {
  const plugin = createNodePorts();
  const info = createNodeInfo(node('n'));
  for (const p of placed) addPodToNodeInfo(info, p);
  const state = new Map<string, unknown>();
  const skipped = plugin.preFilter!(state, incoming, undefined as never);
  if (podHostPorts(incoming).length === 0) expect(skipped).toEqual({ code: 'Skip', reasons: [] });
  else expect(skipped).toBeNull();
  const status = plugin.filter!(state, incoming, info);
  if (status) expect(status).toEqual({ code: 'Unschedulable', reasons: [NODE_PORTS_REASON] });
  return status === null;
}

describe('NodePorts', () => {
  it('takes only host ports from containers (not hostPort 0), defaulting TCP and 0.0.0.0', () => {
    const p: Pod = {
      metadata: { name: 'p' },
      spec: {
        initContainers: [{ name: 'i', image: 'x', ports: [port(9000)] }],
        containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80 }, port(0), port(8001), port(8002, 'UDP', '10.0.0.1')] }],
      },
    };
    expect(podHostPorts(p)).toEqual([
      { ip: '0.0.0.0', protocol: 'TCP', port: 8001 },
      { ip: '10.0.0.1', protocol: 'UDP', port: 8002 },
    ]);
  });

  it('rejects the same port, protocol and address; the protocol tells ports apart', () => {
    expect(fits(pod('new', port(8001)), pod('old', port(8001)))).toBe(false);
    expect(fits(pod('new', port(8001, 'UDP')), pod('old', port(8001)))).toBe(true);
    expect(fits(pod('new', port(8001, 'UDP')), pod('old', port(8001, 'UDP')))).toBe(false);
    expect(fits(pod('new', port(8002)), pod('old', port(8001)))).toBe(true);
    expect(fits(pod('new'), pod('old', port(8001)))).toBe(true);
  });

  it('treats 0.0.0.0 as every address: it clashes with any address, and any address with it', () => {
    expect(fits(pod('new', port(8001, 'TCP', '127.0.0.1')), pod('old', port(8001, 'TCP', '0.0.0.0')))).toBe(false);
    expect(fits(pod('new', port(8001, 'TCP', '0.0.0.0')), pod('old', port(8001, 'TCP', '127.0.0.1')))).toBe(false);
    expect(fits(pod('new', port(8001)), pod('old', port(8001, 'TCP', '10.0.0.2')))).toBe(false);
    expect(fits(pod('new', port(8001, 'TCP', '127.0.0.1')), pod('old', port(8001, 'TCP', '127.0.0.2')))).toBe(true);
    expect(fits(pod('new', port(8001, 'UDP', '127.0.0.1')), pod('old', port(8001, 'TCP', '0.0.0.0')))).toBe(true);
  });

  it("sees a node's pods change (its used ports kept per node generation)", () => {
    const plugin = createNodePorts();
    const info = createNodeInfo(node('n'));
    const old = pod('old', port(8001));
    addPodToNodeInfo(info, old);
    const incoming = pod('new', port(8001));
    expect(plugin.filter!(new Map(), incoming, info)).not.toBeNull();
    removePodFromNodeInfo(info, old);
    expect(plugin.filter!(new Map(), incoming, info)).toBeNull();
  });

  it("registers upstream's events: a pod deleted, a node added or updated", () => {
    expect(createNodePorts().events).toEqual([
      { resource: 'Pod', actions: ['Delete'] },
      { resource: 'Node', actions: ['Add', 'Update'] },
    ]);
  });

  it('places a pod where its host port is free, and words the failure as kube-scheduler', () => {
    const registry = new PluginRegistry();
    registry.register(createNodePorts());
    const profile = buildProfile(registry);
    const nodes = ['a', 'b', 'c'].map((name) => createNodeInfo(node(name)));
    addPodToNodeInfo(nodes[0]!, pod('web-a', port(80)));
    addPodToNodeInfo(nodes[2]!, pod('web-c', port(80, 'TCP', '192.168.0.3')));
    expect(schedulePod(profile, new Map(), pod('web', port(80)), nodes)).toMatchObject({ nodeName: 'b' });
    addPodToNodeInfo(nodes[1]!, pod('web-b', port(80)));
    expect(schedulePod(profile, new Map(), pod('web', port(80)), nodes)).toMatchObject({
      code: 'Unschedulable',
      message: "0/3 nodes are available: 3 node(s) didn't have free ports for the requested pod ports.",
    });
  });
});
