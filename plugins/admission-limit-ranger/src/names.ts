export const PLUGIN_NAME = '@skiff/plugin-admission-limit-ranger';

/** The annotation naming what defaults a pod was given, as kube-apiserver writes it. */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';
