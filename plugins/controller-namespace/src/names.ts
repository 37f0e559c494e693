export const PLUGIN_NAME = '@skiff/plugin-controller-namespace';
/** The name `enabled` in the controller manager's options refers to. */
export const CONTROLLER_NAME = 'namespace';

/** The entry in a namespace's `spec.finalizers` that this controller removes once the namespace is empty. */
export const NAMESPACE_FINALIZER = 'kubernetes';
