export const PLUGIN_NAME = '@skiff/plugin-controller-garbage-collector';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'garbage-collector';

/** Finalizers the API server puts on an owner deleted with propagationPolicy Orphan or Foreground. */
export const FINALIZER = Object.freeze({
  ORPHAN: 'orphan',
  FOREGROUND: 'foregroundDeletion',
});

/** Resources watched when the `resources` option is not given: the ones built-in controllers own. */
export const DEFAULT_RESOURCES: readonly string[] = Object.freeze([
  'pods',
  'replicationcontrollers',
  'replicasets.apps',
  'deployments.apps',
  'daemonsets.apps',
  'statefulsets.apps',
  'controllerrevisions.apps',
  'jobs.batch',
  'cronjobs.batch',
  'persistentvolumeclaims',
]);
