// Pods, and bindings (the older way to bind one to a node).
import { defineKind, RESOURCES, type Binding, type Pod } from '@skiff/api';
import { defaultPod, fieldErrors, validatePod } from '@skiff/api/validation';
import { selectorField } from '../field-selectors.js';
import { podQOSClass } from './pod-qos.js';
import { podCells, POD_COLUMNS } from './pod-table.js';

const DEFAULT_POD_GRACE_SECONDS = 30;

const podField = selectorField<Pod>;

export const pods = defineKind<Pod>({
  ...{},
  ...RESOURCES.pods,
  subresources: ['status', 'binding', 'eviction', 'log', 'exec', 'attach', 'portforward', 'proxy', 'ephemeralcontainers', 'resize'],
  keptOnStatusUpdate: ['deletionTimestamp', 'ownerReferences'],
  table: { columns: POD_COLUMNS, cells: podCells },
  strategy: {
    defaults: defaultPod,
    validateAll(pod, old, subresource) {
      const causes = validatePod(pod, old, subresource);
      if (subresource === 'resize' && old && podQOSClass(pod) !== podQOSClass(old))
        causes.push(fieldErrors.forbidden('spec', 'Pod QOS Class may not change as a result of resizing'));
      return causes;
    },
    prepareForCreate(pod) {
      // As upstream: a new pod's status is its phase and QoS class; conditions come from the scheduler and the kubelet.
      pod.status = { phase: 'Pending', qosClass: podQOSClass(pod) };
    },
    prepareForUpdate: keepPodSpecPart,
    fieldSelectors: {
      'spec.nodeName': podField((p) => p.spec?.nodeName),
      'spec.restartPolicy': podField((p) => p.spec?.restartPolicy),
      'spec.schedulerName': podField((p) => p.spec?.schedulerName),
      'spec.serviceAccountName': podField((p) => p.spec?.serviceAccountName),
      'spec.hostNetwork': podField((p) => Boolean(p.spec?.hostNetwork)),
      'status.phase': podField((p) => p.status?.phase),
      'status.podIP': podField((p) => p.status?.podIPs?.[0]?.ip ?? p.status?.podIP),
      'status.nominatedNodeName': podField((p) => p.status?.nominatedNodeName),
    },
    // A pod bound to a node winds down on it (its kubelet finishes with a grace-0 delete); unbound and finished pods go at once.
    deletionGracePeriod(pod, requested) {
      if (!pod.spec?.nodeName || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 0;
      return requested ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS;
    },
  },
});

/**
 * What each way of updating a pod may change in its spec: the pod itself everything but the ephemeral
 * containers, pods/ephemeralcontainers only those, pods/resize only the containers' resources and resize policies.
 */
function keepPodSpecPart(pod: Pod, old: Pod, subresource: string): void {
  const spec = pod.spec;
  if (!spec || !old.spec) return;
  if (subresource === '') {
    if (old.spec.ephemeralContainers === undefined) delete spec.ephemeralContainers;
    else spec.ephemeralContainers = old.spec.ephemeralContainers;
  } else if (subresource === 'ephemeralcontainers') {
    pod.spec = { ...{}, ...structuredClone(old.spec), ...(spec.ephemeralContainers ? { ephemeralContainers: spec.ephemeralContainers } : {}) };
    if (!spec.ephemeralContainers) delete pod.spec.ephemeralContainers;
  } else if (subresource === 'resize') {
    const next = structuredClone(old.spec);
    for (const container of next.containers ?? []) {
      const requested = spec.containers?.find((c) => c.name === container.name);
      if (!requested) continue;
      if (requested.resources === undefined) delete container.resources;
      else container.resources = requested.resources;
      if (requested.resizePolicy === undefined) delete container.resizePolicy;
      else container.resizePolicy = requested.resizePolicy;
    }
    pod.spec = next;
  }
}

/** POST /api/v1/namespaces/<ns>/bindings: binds the pod the Binding names (the older form of pods/binding). */
export const bindings = defineKind<Binding>({ ...{}, ...RESOURCES.bindings, verbs: ['create'] });
