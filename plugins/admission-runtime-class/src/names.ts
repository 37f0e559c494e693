import { ADMISSION_STAGE } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-runtime-class';

/**
 * After LimitRanger and the other built-in pod plugins, as kube-apiserver orders RuntimeClass; before the
 * webhooks and quota, which see the overhead it sets.
 */
export const RUNTIME_CLASS_STAGE = ADMISSION_STAGE.LIMITS + 50;

/** Where RuntimeClasses are kept (cluster-scoped). */
export const RUNTIME_CLASSES = Object.freeze({ group: 'node.k8s.io', resource: 'runtimeclasses' });
