export { default, PLUGIN_NAME, CONTROLLER_MANAGER_USER } from './plugin.js';
export { ControllerManager, type ControllerManagerDeps } from './manager.js';
export { CONTROLLER_MANAGER_DEFAULTS, controllerManagerOptionsSchema, type ControllerManagerOptions } from './options.js';
export { ControllerRegistryImpl } from './registry.js';
export { isControllerEnabled, checkEnabledNames } from './enabled.js';
export { ControllerManagerError, CONTROLLER_MANAGER_ERRORS, type ControllerManagerErrorCode } from './errors.js';
export { controllerRefOf, newControllerRef, ownerReferencesPatch, type JsonPatchOperation } from './owner-references.js';
export { ControllerRefManager, type ClaimOptions } from './claim.js';
export {
  CONTROLLER_UID_INDEX,
  OWNER_UID_INDEX,
  ORPHAN_NAMESPACE_INDEX,
  byControllerUid,
  byOwnerUid,
  orphansByNamespace,
  claimCandidates,
} from './indexes.js';
export { kubeTime } from './time.js';
export { trackWork } from './track.js';
