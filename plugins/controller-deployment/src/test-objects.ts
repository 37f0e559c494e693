import type { Deployment, ReplicaSet } from '@skiff/api';
import { ANNOTATION } from './names.js';

/** A Deployment for the tests: 10 replicas of app=web, rolling update with the defaults unless given. */
export function testDeployment(spec: Partial<Deployment['spec']> = {}, status?: Deployment['status'], generation = 1): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', uid: 'd-uid', generation },
    spec: {
      replicas: 10,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } },
      ...spec,
    },
    status,
  };
}

/** A ReplicaSet of the Deployment: its size, how many pods it has and how many are available. */
export function testReplicaSet(
  name: string,
  replicas: number,
  options: { available?: number; actual?: number; ready?: number; created?: string; revision?: number; annotations?: Record<string, string> } = {},
): ReplicaSet {
  const annotations: Record<string, string> = { ...options.annotations };
  if (options.revision !== undefined) annotations[ANNOTATION.REVISION] = String(options.revision);
  return {
    metadata: { name, namespace: 'default', uid: `${name}-uid`, creationTimestamp: options.created ?? '2024-01-01T00:00:00Z', annotations, generation: 1 },
    spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app' }] } } },
    status: {
      replicas: options.actual ?? replicas,
      readyReplicas: options.ready ?? options.available ?? replicas,
      availableReplicas: options.available ?? replicas,
      observedGeneration: 1,
    },
  };
}
