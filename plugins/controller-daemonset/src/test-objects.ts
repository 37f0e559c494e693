import type { DaemonSet, Node, Pod } from '@skiff/api';
import { CONTROLLER_REVISION_HASH_LABEL } from './names.js';
import { affinityForNode } from './node-affinity.js';

/** A DaemonSet for the tests: app=agent, generation 1, RollingUpdate with upstream's defaults unless given. */
export function testDaemonSet(spec: Partial<DaemonSet['spec']> = {}, generation = 1): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'default', uid: 'ds-uid', generation },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'agent', image: 'agent:1' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      ...spec,
    },
  };
}

export function testNode(name: string, options: { labels?: Record<string, string>; taints?: { key: string; value?: string; effect: string }[] } = {}): Node {
  return { metadata: { name, labels: { 'kubernetes.io/hostname': name, ...options.labels } }, spec: options.taints ? { taints: options.taints } : {} };
}

/**
 * A daemon pod on `node` (bound unless `bound: false`, then only aimed at it by affinity), of revision
 * `hash`, ready since `readySince` if given.
 */
export function testPod(
  name: string,
  node: string,
  hash: string,
  options: { bound?: boolean; readySince?: string; created?: string; phase?: 'Pending' | 'Running' | 'Failed' | 'Succeeded'; deleting?: boolean } = {},
): Pod {
  const pod: Pod = {
    metadata: {
      name,
      namespace: 'default',
      uid: `${name}-uid`,
      creationTimestamp: options.created ?? '2024-01-01T00:00:00Z',
      labels: { app: 'agent', [CONTROLLER_REVISION_HASH_LABEL]: hash },
    },
    spec: { containers: [{ name: 'agent' }], affinity: affinityForNode(undefined, node), ...(options.bound === false ? {} : { nodeName: node }) },
    status: { phase: options.phase ?? 'Running' },
  };
  if (options.readySince) pod.status!.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: options.readySince }];
  if (options.deleting) pod.metadata.deletionTimestamp = '2024-01-01T00:10:00Z';
  return pod;
}

export const NOW = Date.parse('2024-01-01T01:00:00Z');
export const LONG_AGO = '2024-01-01T00:00:00Z';
