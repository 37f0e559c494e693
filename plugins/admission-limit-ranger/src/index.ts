import type { LimitRange, PersistentVolumeClaim, Pod } from '@skiff/api';
import { ADMISSION_STAGE, AdmissionError, definePlugin, isAdmissionFor, packageInfo, type AdmissionRequest, type PluginOptions } from '@skiff/kernel';
import type {} from '@skiff/store';
import { applyDefaults, qosClass } from './defaults.js';
import { PLUGIN_NAME } from './names.js';
import { aggregate, claimViolations, podViolations } from './validate.js';

/**
 * LimitRanger: a namespace's LimitRanges give new pods' containers their default requests and limits
 * (mutating, at ADMISSION_STAGE.LIMITS), and refuse pods and PersistentVolumeClaims outside their min, max and
 * limit-to-request ratio (validating, same stage).
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['store'],
  apply(kernel) {
    // Read from the store under the API server's key layout (/registry/limitranges/<namespace>/): one consistent read.
    const rangesOf = async (namespace: string): Promise<LimitRange[]> => {
      const { items } = await kernel.resolve('store').list(`/registry/limitranges/${namespace}/`);
      return items.map((item) => item.object as LimitRange);
    };

    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.LIMITS }, async (request) => {
      if (!isAdmissionFor(request, 'pods') || request.operation !== 'CREATE' || !request.object) return;
      const ranges = await rangesOf(request.namespace);
      if (ranges.length === 0) return;
      const pod = request.object as Pod;
      // The QoS class was worked out before admission; defaults can change it.
      if (applyDefaults(pod, ranges) && pod.status) pod.status.qosClass = qosClass(pod);
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.LIMITS }, async (request) => {
      const violations = await check(request, rangesOf);
      if (violations.length > 0) throw new AdmissionError(`${subject(request)} is forbidden: ${aggregate(violations)}`);
    });
  },
});
export default plugin;

async function check(request: AdmissionRequest, rangesOf: (namespace: string) => Promise<LimitRange[]>): Promise<string[]> {
  if (isAdmissionFor(request, 'pods') && request.operation === 'CREATE' && request.object) {
    const ranges = await rangesOf(request.namespace);
    return ranges.length ? podViolations(request.object as Pod, ranges) : [];
  }
  if (isAdmissionFor(request, 'persistentvolumeclaims') && (request.operation === 'CREATE' || request.operation === 'UPDATE') && request.object) {
    const ranges = await rangesOf(request.namespace);
    return ranges.length ? claimViolations(request.object as PersistentVolumeClaim, ranges) : [];
  }
  return [];
}

function subject(request: AdmissionRequest): string {
  return `${request.resource.resource} "${request.name}"`;
}

export type LimitRangerOptions = PluginOptions<typeof plugin>;

export { PLUGIN_NAME, LIMIT_RANGER_ANNOTATION } from './names.js';
export { applyDefaults, qosClass } from './defaults.js';
export { podViolations, claimViolations, podTotals, aggregate } from './validate.js';
export { effectiveItem, itemsOfType } from './items.js';
