import { describe, expect, it } from 'vitest';
import type { Container, Node, Pod } from '@skiff/api';
import { generalPredicates } from './admission.js';

const node: Node = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-1', labels: { 'kubernetes.io/os': 'linux', disk: 'ssd' } },
  spec: {},
  status: { allocatable: { cpu: '2', memory: '1Gi', pods: '3', 'ephemeral-storage': '10Gi', 'example.com/gpu': '1' } },
};

function pod(name: string, container: Partial<Container> = {}, spec: Partial<Pod['spec']> = {}, labels?: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(labels ? { labels } : {}) },
    spec: { nodeName: 'node-1', containers: [{ name: 'main', image: 'busybox', ...container }], ...spec },
  };
}

const port = (hostPort: number, hostIP?: string, protocol?: string) => ({
  ports: [{ containerPort: 80, hostPort, ...(hostIP ? { hostIP } : {}), ...(protocol ? { protocol } : {}) }],
});
const requests = (list: Record<string, string>) => ({ resources: { requests: list } });

describe("the kubelet's general admission checks", () => {
  it('admits a pod that fits', () => {
    expect(generalPredicates(pod('a', requests({ cpu: '1' })), node, [pod('b', requests({ cpu: '1' }))])).toBeUndefined();
  });

  it('refuses a host port another pod holds on the same address or on all of them (NodePorts), not on another protocol or address', () => {
    const taken = { reason: 'NodePorts', message: 'Pod was rejected: Predicate NodePorts failed' };
    expect(generalPredicates(pod('a', port(8080)), node, [pod('b', port(8080))])).toEqual(taken);
    expect(generalPredicates(pod('a', port(8080, '10.0.0.1')), node, [pod('b', port(8080))])).toEqual(taken);
    expect(generalPredicates(pod('a', port(8080)), node, [pod('b', port(8080, '10.0.0.1'))])).toEqual(taken);
    expect(generalPredicates(pod('a', port(8080, '10.0.0.1')), node, [pod('b', port(8080, '10.0.0.2'))])).toBeUndefined();
    expect(generalPredicates(pod('a', port(8080, undefined, 'UDP')), node, [pod('b', port(8080))])).toBeUndefined();
  });

  it('refuses a pod the node has no room for, naming the resource with its amounts (OutOf<resource>)', () => {
    expect(generalPredicates(pod('a', requests({ cpu: '1500m' })), node, [pod('b', requests({ cpu: '1' }))])).toEqual({
      reason: 'OutOfcpu',
      message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000",
    });
    expect(generalPredicates(pod('a', requests({ memory: '2Gi' })), node, [])).toMatchObject({ reason: 'OutOfmemory' });
    expect(generalPredicates(pod('a', requests({ 'ephemeral-storage': '20Gi' })), node, [])).toMatchObject({ reason: 'OutOfephemeral-storage' });
    expect(generalPredicates(pod('a', requests({ 'example.com/gpu': '2' })), node, [])).toMatchObject({ reason: 'OutOfexample.com/gpu' });
    // An extended resource the node does not know is the cluster's business.
    expect(generalPredicates(pod('a', requests({ 'other.example/thing': '1' })), node, [])).toBeUndefined();
    expect(generalPredicates(pod('a'), node, [pod('b'), pod('c'), pod('d')])).toEqual({
      reason: 'OutOfpods',
      message: "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    });
  });

  it('refuses a pod whose node selector, node name, NoExecute taints or operating system do not match', () => {
    expect(generalPredicates(pod('a', {}, { nodeSelector: { disk: 'hdd' } }), node, [])).toEqual({
      reason: 'NodeAffinity',
      message: 'Pod was rejected: Predicate NodeAffinity failed',
    });
    expect(generalPredicates(pod('a', {}, { nodeName: 'node-2' }), node, [])).toMatchObject({ reason: 'NodeName' });
    const tainted: Node = {
      ...node,
      spec: {
        taints: [
          { key: 'gone', effect: 'NoExecute' },
          { key: 'busy', effect: 'NoSchedule' },
        ],
      },
    };
    expect(generalPredicates(pod('a'), tainted, [])).toEqual({ reason: 'TaintToleration', message: 'Pod was rejected: Predicate TaintToleration failed' });
    expect(generalPredicates(pod('a', {}, { tolerations: [{ key: 'gone', operator: 'Exists' }] }), tainted, [])).toBeUndefined();
    expect(generalPredicates(pod('a', {}, { os: { name: 'windows' } }), node, [])).toEqual({
      reason: 'PodOSNotSupported',
      message: "Pod was rejected: Failed to admit pod as the OS field doesn't match node OS",
    });
    expect(generalPredicates(pod('a', {}, {}, { 'kubernetes.io/os': 'windows' }), node, [])).toMatchObject({ reason: 'PodOSSelectorNodeLabelDoesNotMatch' });
  });
});
