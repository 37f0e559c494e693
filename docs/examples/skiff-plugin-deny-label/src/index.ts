import { ADMISSION_STAGE, AdmissionError, definePlugin, isAdmissionFor, packageInfo, type PluginOptions } from '@skiff/kernel';

const PLUGIN_NAME = 'skiff-plugin-deny-label';

const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    required: ['label'],
    properties: {
      label: { type: 'string', description: 'label key that makes a pod rejected' },
      message: {
        type: 'string',
        default: 'pods with this label are not allowed here',
        description: 'why, as the user will read it after `pods "<name>" is forbidden: `',
      },
    },
  },
  apply(kernel, { label, message }) {
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.LIMITS }, async (request) => {
      // Narrows request.object to a Pod.
      if (!isAdmissionFor(request, 'pods') || request.operation !== 'CREATE') return;
      if (request.object?.metadata.labels?.[label] === undefined) return;
      throw new AdmissionError(`pods "${request.name}" is forbidden: ${message}`);
    });
  },
});
export default plugin;

export type DenyLabelOptions = PluginOptions<typeof plugin>;
