import type { Pod, RuntimeClass } from '@skiff/api';
import { definePlugin, isAdmissionFor, packageInfo, type AdmissionRequest, type PluginOptions } from '@skiff/kernel';
import { RuntimeClassAdmissionError } from './errors.js';
import { PLUGIN_NAME, RUNTIME_CLASS_STAGE, RUNTIME_CLASSES } from './names.js';
import { mergeNodeSelector, mergeTolerations, sameResources } from './scheduling.js';

export { PLUGIN_NAME, RUNTIME_CLASS_STAGE } from './names.js';
export { RUNTIME_CLASS_ADMISSION_ERRORS, RuntimeClassAdmissionError, type RuntimeClassAdmissionErrorCode } from './errors.js';
export { isSuperset, mergeNodeSelector, mergeTolerations, sameResources } from './scheduling.js';

const PODS = 'pods';

/** A pod as kube-apiserver's admission names it: by name, else by generateName (names are generated later). */
const subjectOf = (request: AdmissionRequest<Pod>) => ({
  resource: PODS,
  name: request.name || request.object?.metadata.name || request.object?.metadata.generateName || 'Unknown',
});

/** The RuntimeClass a new pod names (undefined when it names none); a pod naming a missing one is refused. */
async function runtimeClassOf(request: AdmissionRequest<Pod>): Promise<RuntimeClass | undefined> {
  const name = request.object?.spec?.runtimeClassName;
  if (!name) return undefined;
  // Read from the store on every pod that names one: a class created or deleted a moment ago counts at once.
  const runtimeClass = (await request.get(RUNTIME_CLASSES, '', name)) as RuntimeClass | undefined;
  if (!runtimeClass) throw new RuntimeClassAdmissionError(subjectOf(request), 'SKIFF_ERR_RUNTIME_CLASS_NOT_FOUND', { name });
  return runtimeClass;
}

const isPodCreate = (request: AdmissionRequest): request is AdmissionRequest<Pod> =>
  isAdmissionFor(request, PODS) && request.operation === 'CREATE' && request.object?.spec !== undefined;

/**
 * kube-apiserver's RuntimeClass admission. A new pod naming a `runtimeClassName` that does not exist is refused;
 * one naming a class with `overhead.podFixed` gets it as `spec.overhead` (a different overhead of its own is
 * refused, and so is an overhead without such a class); the class's `scheduling` adds its node selector (a
 * pod selecting another value for the same key is refused) and its tolerations.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  apply(kernel) {
    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: RUNTIME_CLASS_STAGE }, async (request) => {
      if (!isPodCreate(request)) return;
      const runtimeClass = await runtimeClassOf(request);
      if (!runtimeClass) return;
      const spec = request.object!.spec;
      const podFixed = runtimeClass.overhead?.podFixed;
      if (runtimeClass.overhead) {
        if (spec.overhead && !sameResources(podFixed, spec.overhead))
          throw new RuntimeClassAdmissionError(subjectOf(request), 'SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_MISMATCH');
        if (podFixed && Object.keys(podFixed).length > 0) spec.overhead = { ...podFixed };
        else delete spec.overhead;
      }
      const scheduling = runtimeClass.scheduling;
      if (!scheduling) return;
      const selector = mergeNodeSelector(spec.nodeSelector, scheduling.nodeSelector);
      if ('conflict' in selector) throw new RuntimeClassAdmissionError(subjectOf(request), 'SKIFF_ERR_RUNTIME_CLASS_NODE_SELECTOR_CONFLICT', selector.conflict);
      if (selector.merged) spec.nodeSelector = selector.merged;
      const tolerations = mergeTolerations(spec.tolerations ?? [], scheduling.tolerations ?? []);
      if (tolerations.length > 0) spec.tolerations = tolerations;
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: RUNTIME_CLASS_STAGE }, async (request) => {
      if (!isPodCreate(request)) return;
      const runtimeClass = await runtimeClassOf(request);
      const overhead = request.object!.spec.overhead;
      if (runtimeClass?.overhead) {
        if (!sameResources(runtimeClass.overhead.podFixed, overhead))
          throw new RuntimeClassAdmissionError(subjectOf(request), 'SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_MISMATCH');
      } else if (overhead) {
        throw new RuntimeClassAdmissionError(subjectOf(request), 'SKIFF_ERR_RUNTIME_CLASS_OVERHEAD_WITHOUT_CLASS');
      }
    });
  },
});
export default plugin;

export type RuntimeClassAdmissionOptions = PluginOptions<typeof plugin>;
