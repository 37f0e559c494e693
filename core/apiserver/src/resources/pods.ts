import { defaultPod, podSchema, validatePod, type Pod } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { selectorField } from './field-selectors.js';
import { ALL_VERBS, decoderFor, splitSpecAndStatus } from './lifecycle.js';
import { podQOSClass } from './pod-qos.js';
import { podCells, POD_COLUMNS } from './pod-table.js';

const field = selectorField<Pod>;

export const pods: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  listKind: 'PodList',
  resource: 'pods',
  singular: 'pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status', 'binding', 'eviction', 'log'],
  verbs: ALL_VERBS,
  hasStatus: true,
  decode: decoderFor(podSchema),
  defaults: (object) => defaultPod(object as Pod),
  validate: (object, old) => validatePod(object as Pod, old as Pod | undefined),
  prepareForCreate(object) {
    object.status = { phase: 'Pending', conditions: [], qosClass: podQOSClass(object as Pod) };
  },
  // The kubelet's status writes may not move the pod, cancel its deletion or change its owners.
  prepareForUpdate: splitSpecAndStatus(['deletionTimestamp', 'ownerReferences']),
  fieldSelectors: {
    'spec.nodeName': field((p) => p.spec?.nodeName),
    'spec.restartPolicy': field((p) => p.spec?.restartPolicy),
    'spec.schedulerName': field((p) => p.spec?.schedulerName),
    'spec.serviceAccountName': field((p) => p.spec?.serviceAccountName as string | undefined),
    'spec.hostNetwork': field((p) => Boolean(p.spec?.hostNetwork)),
    'status.phase': field((p) => p.status?.phase),
    'status.podIP': field((p) => p.status?.podIPs?.[0]?.ip ?? p.status?.podIP),
    'status.nominatedNodeName': field((p) => (p.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName),
  },
  table: { columns: POD_COLUMNS, cells: podCells },
};
