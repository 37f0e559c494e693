export { default, PLUGIN_NAME, CONTROLLER_MANAGER_USER } from './plugin.js';
export { ControllerManager, type ControllerManagerDeps, type ControllerManagerSettings } from './manager.js';
export { CONTROLLER_MANAGER_DEFAULTS, controllerManagerOptionsSchema, type ControllerManagerOptions } from './options.js';
export { ControllerRegistryImpl } from './registry.js';
export { isControllerEnabled, checkEnabledNames } from './enabled.js';
export { ControllerManagerError, CONTROLLER_MANAGER_ERRORS, type ControllerManagerErrorCode } from './errors.js';
export { controllerRefOf, newControllerRef, ownerReferencesPatch, resolveControllerRef, type JsonPatchOperation } from './owner-references.js';
export { ControllerRefManager, type ClaimOptions } from './claim.js';
export { CONTROLLER_UID_INDEX, OWNER_UID_INDEX, ORPHAN_NAMESPACE_INDEX, byControllerUid, byOwnerUid, orphansByNamespace, claimCandidates } from './indexes.js';
export { kubeTime } from './time.js';
export { Expectations, EXPECTATIONS_TIMEOUT_MS } from './expectations.js';
export { slowStartBatch, type BatchResult } from './slow-start.js';
export { canonicalJson } from './canonical-json.js';
export { templateHash } from './template-hash.js';
export { ownedPodEventHandlers, type OwnedPodEventsOptions, type PodEventHandlers, type PodOwner } from './pod-events.js';
export { trackWork } from './track.js';
export {
  controllerPlugin,
  type ControllerFactory,
  type ControllerOptionsSchema,
  type ControllerPluginDefinition,
  type ControllerPluginOptions,
  type RunnableController,
} from './controller-plugin.js';
export { runWhenSynced, type RunWhenSyncedOptions } from './run-when-synced.js';
export { isPodActive } from './active-pods.js';
export { POD_CONTROL_EVENT_REASON } from './event-reasons.js';
export { enqueueActiveNamespaces, isNamespaceActive, isNamespaceActiveLive } from './active-namespaces.js';
export { isNamespaceTerminating } from './namespace-terminating.js';
export { TriggerTimeTracker } from './trigger-time.js';
export { applyWrites, deleteObjects, WrittenObjects, type ApplyWritesOptions, type WritePlan } from './written-objects.js';
