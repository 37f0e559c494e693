import type { Pod } from '@skiff/api';
import { ADMISSION_STAGE, definePlugin, packageInfo, type PluginOptions } from '@skiff/kernel';
import type {} from '@skiff/store';
import { PodSecurityAdmission, type PodLister } from './admission.js';
import { PLUGIN_NAME } from './names.js';
import { configFromOptions, OPTIONS_SCHEMA } from './options.js';

/**
 * Where Pod Security runs among the validating taps: after ServiceAccount (and NodeRestriction), before quota
 * and webhooks, as in kube-apiserver's order of admission plugins.
 */
export const POD_SECURITY_STAGE = ADMISSION_STAGE.SERVICE_ACCOUNT + 200;

/** PodSecurity admission: privileged, baseline and restricted by namespace labels. */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  wants: ['store'],
  options: OPTIONS_SCHEMA,
  apply(kernel, options) {
    const config = configFromOptions(options);
    // A namespace's pods, read from the store under the API server's key layout (/registry/pods/<namespace>/).
    const listPods: PodLister = async (namespace) => {
      if (!kernel.hasComponent('store')) return [];
      const { items } = await kernel.resolve('store').list(`/registry/pods/${namespace}/`);
      return items.map((item) => item.object as Pod);
    };
    const admission = new PodSecurityAdmission(config, listPods);
    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: POD_SECURITY_STAGE }, (request) => admission.validate(request));
  },
});
export default plugin;

export type PodSecurityOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME, LABELS, AUDIT_ANNOTATIONS, LATEST_MINOR } from './names.js';
export { PolicyEvaluator, describeViolations } from './evaluator.js';
export { policyFromLabels, type Level, type LevelVersion, type Policy } from './policy.js';
