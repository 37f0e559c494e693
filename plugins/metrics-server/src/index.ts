export const PLUGIN_NAME = '@skiff/plugin-metrics-server';
