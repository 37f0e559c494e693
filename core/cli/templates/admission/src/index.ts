import { ADMISSION_STAGE, AdmissionError, definePlugin, isAdmissionFor, packageInfo, type PluginOptions } from '@skiff/kernel';

/** The npm package name: cluster configs name the plugin by it, and every tap carries it. */
export const PLUGIN_NAME = '{{package}}';

/**
 * An admission plugin: new pods must carry a label. The mutating tap fills the label in when a default
 * value is configured; the validating tap, which sees the object after every mutating plugin ran, rejects
 * pods that still lack it. Pods that already exist are left alone, so controllers can still update them.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      label: { type: 'string', default: 'team', description: 'the label every new pod must carry' },
      defaultValue: { type: 'string', description: 'set the label to this value when a pod comes without it' },
      message: { type: 'string', description: 'why, as the user reads it (default: pods must carry the label "<label>")' },
    },
  },
  apply(kernel, { label, defaultValue, message = `pods must carry the label "${label}"` }) {
    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.DEFAULTS }, async (request) => {
      if (defaultValue === undefined || !isAdmissionFor(request, 'pods') || request.operation !== 'CREATE' || !request.object) return;
      const { metadata } = request.object;
      if (metadata.labels?.[label] === undefined) metadata.labels = { ...metadata.labels, [label]: defaultValue };
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.LIMITS }, async (request) => {
      if (!isAdmissionFor(request, 'pods') || request.operation !== 'CREATE') return;
      if (request.object?.metadata.labels?.[label] !== undefined) return;
      throw new AdmissionError(`pods "${request.name}" is forbidden: ${message}`);
    });
  },
});

export default plugin;

/** The options `apply` receives, with defaults filled in. */
export type RequireLabelOptions = PluginOptions<typeof plugin>;
