import type { ResourceDefinition } from '@skiff/kernel';
import { deployments } from './deployments.js';
import { events } from './events.js';
import { leases } from './leases.js';
import { namespaces } from './namespaces.js';
import { nodes } from './nodes.js';
import { pods } from './pods.js';
import { replicaSets } from './replicasets.js';

export { podQOSClass, type QOSClass } from './pod-qos.js';
export { NAMESPACE_FINALIZER } from './namespaces.js';

/** The kinds every Skiff API server serves: namespaces, nodes, pods, events, deployments, replicasets and leases. */
export function builtinResources(): ResourceDefinition[] {
  return [namespaces, nodes, pods, events, deployments, replicaSets, leases];
}
