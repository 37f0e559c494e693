export const PLUGIN_NAME = '@skiff/plugin-controller-hpa';
