import type { Pod, PriorityClass } from '@skiff/api';
import { createLoopbackClient } from '@skiff/client';
import { definePlugin, isAdmissionFor, LIFECYCLE_STAGE, packageInfo, type AdmissionRequest, type Logger } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import { ensureSystemClasses } from './bootstrap.js';
import { PriorityClasses } from './classes.js';
import { PriorityAdmissionError } from './errors.js';
import { DEFAULT_PREEMPTION_POLICY, DEFAULT_PRIORITY, isSystemPriorityClass, PLUGIN_NAME, PRIORITY_CLASSES_PREFIX, PRIORITY_STAGE } from './names.js';

export { PLUGIN_NAME, PRIORITY_STAGE, DEFAULT_PRIORITY, SYSTEM_PRIORITY_CLASSES } from './names.js';
export { PRIORITY_ADMISSION_ERRORS, PriorityAdmissionError, type PriorityAdmissionErrorCode } from './errors.js';

/** Writes the system classes at start, as kube-apiserver's own loopback identity does. */
const APISERVER_USER = { username: 'system:apiserver', uid: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] };
const PRIORITY_CLASSES = { group: 'scheduling.k8s.io', resource: 'priorityclasses' };
const PODS = 'pods';
const CLASSES = 'priorityclasses.scheduling.k8s.io';

const isPriorityClassRequest = (request: AdmissionRequest) =>
  request.resource.group === PRIORITY_CLASSES.group && request.resource.resource === PRIORITY_CLASSES.resource && !request.subresource;

/**
 * kube-apiserver's Priority admission: a new pod gets `spec.priority` (and `spec.preemptionPolicy`) from the
 * PriorityClass it names, or from the cluster's global-default class, or 0 when there is none; a pod naming a class
 * that does not exist, or stating a priority of its own that differs, is refused. At most one class is the global
 * default. The system classes `system-node-critical` and `system-cluster-critical` are created at start and cannot
 * be deleted.
 */
export default definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['store', 'apiHandler'],
  apply(kernel) {
    const classes = new PriorityClasses();
    let store: Store | undefined;
    let abort: AbortController | undefined;
    let logger: Logger = kernel.logger;

    kernel.lifecycle(PLUGIN_NAME, LIFECYCLE_STAGE.API_SERVER - 10, {
      async start() {
        logger = kernel.logger.child({ component: PLUGIN_NAME });
        store = kernel.resolve('store');
        abort = new AbortController();
        await classes.follow(store, abort.signal, logger);
      },
      async stop() {
        abort?.abort();
      },
    });

    kernel.lifecycle(`${PLUGIN_NAME}/system-classes`, LIFECYCLE_STAGE.API_SERVER + 10, {
      async start() {
        await ensureSystemClasses(createLoopbackClient(kernel.resolve('apiHandler'), APISERVER_USER));
      },
      async stop() {},
    });

    /** The class a pod names: the watched copy, or (written a moment ago) the stored one. */
    const findClass = async (request: AdmissionRequest, name: string): Promise<PriorityClass | undefined> =>
      classes.get(name) ?? ((await request.get(PRIORITY_CLASSES, '', name)) as PriorityClass | undefined);

    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: PRIORITY_STAGE }, async (request) => {
      if (!isAdmissionFor(request, PODS) || !request.object?.spec) return;
      const spec = request.object.spec;
      if (request.operation === 'UPDATE') {
        // Priority is set once, at create; an update that leaves it out (a replace from a manifest) keeps it.
        const old = (request.oldObject as Pod | undefined)?.spec;
        if (spec.priority === undefined && old?.priority !== undefined) spec.priority = old.priority;
        if (spec.preemptionPolicy === undefined && old?.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
        return;
      }
      if (request.operation !== 'CREATE') return;
      const subject = { resource: PODS, name: request.name || request.object.metadata.name || request.object.metadata.generateName || 'Unknown' };
      let priorityClass: PriorityClass | undefined;
      if (spec.priorityClassName) {
        priorityClass = await findClass(request, spec.priorityClassName);
        if (!priorityClass) throw new PriorityAdmissionError(subject, 'SKIFF_ERR_PRIORITY_CLASS_NOT_FOUND', { name: spec.priorityClassName });
      } else {
        priorityClass = classes.globalDefault();
        if (priorityClass) spec.priorityClassName = priorityClass.metadata.name;
      }
      const priority = priorityClass ? (priorityClass.value ?? 0) : DEFAULT_PRIORITY;
      if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority)
        throw new PriorityAdmissionError(subject, 'SKIFF_ERR_PRIORITY_MISMATCH', { given: spec.priority, computed: priority });
      spec.priority = priority;
      const policy = priorityClass ? priorityClass.preemptionPolicy : DEFAULT_PREEMPTION_POLICY;
      if (policy) {
        if (spec.preemptionPolicy && spec.preemptionPolicy !== policy)
          throw new PriorityAdmissionError(subject, 'SKIFF_ERR_PRIORITY_PREEMPTION_MISMATCH', { given: spec.preemptionPolicy, computed: policy });
        spec.preemptionPolicy = policy;
      }
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: PRIORITY_STAGE }, async (request) => {
      if (!isPriorityClassRequest(request)) return;
      const subject = { resource: CLASSES, name: request.name };
      if (request.operation === 'DELETE') {
        if (isSystemPriorityClass(request.name)) throw new PriorityAdmissionError(subject, 'SKIFF_ERR_PRIORITY_SYSTEM_CLASS_DELETE');
        return;
      }
      const priorityClass = request.object as PriorityClass | undefined;
      if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || !priorityClass?.globalDefault || !store) return;
      // Rare and must not race the watch: read the store itself.
      const { items } = await store.list(PRIORITY_CLASSES_PREFIX);
      const name = priorityClass.metadata.name ?? request.name;
      const other = items.map((item) => item.object as PriorityClass).find((existing) => existing.globalDefault && existing.metadata.name !== name);
      if (other) throw new PriorityAdmissionError({ resource: CLASSES, name }, 'SKIFF_ERR_PRIORITY_SECOND_DEFAULT', { name: other.metadata.name ?? '' });
    });
  },
});
