// The core group (`/api/v1`): one module per kind or small family of kinds.
import type { ResourceDefinition } from '@skiff/api';
import { serviceAccounts } from './accounts.js';
import { componentStatuses } from './component-statuses.js';
import { configMaps, secrets } from './config.js';
import { events } from './events.js';
import { namespaces } from './namespaces.js';
import { nodes } from './nodes.js';
import { bindings, pods } from './pods.js';
import { limitRanges, resourceQuotas } from './quotas.js';
import { endpoints, services } from './services.js';
import { persistentVolumeClaims, persistentVolumes } from './storage.js';
import { podTemplates, replicationControllers } from './workloads.js';

export { bindings, pods } from './pods.js';
export { NAMESPACE_FINALIZER } from './namespaces.js';
export { podQOSClass, type QOSClass } from './pod-qos.js';

/** The core group's kinds, in upstream's discovery order (alphabetical by resource). */
export const CORE_KINDS: ResourceDefinition[] = [
  bindings,
  componentStatuses,
  configMaps,
  endpoints,
  events,
  limitRanges,
  namespaces,
  nodes,
  persistentVolumeClaims,
  persistentVolumes,
  pods,
  podTemplates,
  replicationControllers,
  resourceQuotas,
  secrets,
  serviceAccounts,
  services,
];
