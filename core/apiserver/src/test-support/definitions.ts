import type { KubeObject, StatusCause } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';

/**
 * Small resource definitions for the API server's own tests: they exercise every hook of a definition
 * (decode, defaults, validate, table, field selectors, subresources) without depending on the built-in
 * kinds, which tests then replace through the `resources` hook.
 */
const TOP_LEVEL = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status', 'data']);

function decode(object: unknown, strict: boolean): { errors: StatusCause[]; unknownFields: string[] } {
  const errors: StatusCause[] = [];
  const unknownFields: string[] = [];
  const record = object as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!TOP_LEVEL.has(key) && strict) unknownFields.push(key);
  const spec = record.spec as Record<string, unknown> | undefined;
  if (spec && 'replicas' in spec && typeof spec.replicas !== 'number')
    errors.push({ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(spec.replicas)}: expected an integer` });
  if (spec && strict) for (const key of Object.keys(spec)) if (key.startsWith('unknown')) unknownFields.push(`spec.${key}`);
  return { errors, unknownFields };
}

const age = (object: KubeObject, now: number) => `${Math.max(0, Math.floor((now - Date.parse(object.metadata.creationTimestamp ?? '')) / 1000))}s`;

export const testNamespaces: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  resource: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  shortNames: ['ns'],
  subresources: ['status', 'finalize'],
  hasStatus: true,
  decode,
  prepareForCreate(object) {
    object.status = { phase: 'Active' };
  },
  deletionFinalizers: (object) => (object.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [],
  onDeletionMarked(object) {
    object.status = { ...(object.status as object), phase: 'Terminating' };
  },
  table: {
    columns: [
      { name: 'Name', type: 'string', format: 'name', priority: 0 },
      { name: 'Status', type: 'string', priority: 0 },
      { name: 'Age', type: 'string', priority: 0 },
    ],
    cells: (object, now) => [object.metadata.name, (object.status as { phase?: string } | undefined)?.phase ?? '', age(object, now)],
  },
};

export const testPods: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  singular: 'pod',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  subresources: ['status', 'binding', 'eviction', 'log'],
  hasStatus: true,
  decode,
  defaults(object) {
    const spec = object.spec as { restartPolicy?: string; terminationGracePeriodSeconds?: number } | undefined;
    if (spec) {
      spec.restartPolicy ??= 'Always';
      spec.terminationGracePeriodSeconds ??= 30;
    }
  },
  prepareForCreate(object) {
    object.status = { phase: 'Pending' };
  },
  deletionGracePeriod(object, requested) {
    const spec = object.spec as { nodeName?: string; terminationGracePeriodSeconds?: number } | undefined;
    return spec?.nodeName ? (requested ?? spec.terminationGracePeriodSeconds ?? 30) : 0;
  },
  validate(object) {
    const containers = (object.spec as { containers?: unknown[] } | undefined)?.containers;
    return containers?.length ? [] : [{ type: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' }];
  },
  fieldSelectors: {
    'spec.nodeName': (object) => (object.spec as { nodeName?: string } | undefined)?.nodeName,
    'status.phase': (object) => (object.status as { phase?: string } | undefined)?.phase,
  },
  table: {
    columns: [
      { name: 'Name', type: 'string', format: 'name', priority: 0 },
      { name: 'Status', type: 'string', priority: 0 },
      { name: 'Node', type: 'string', priority: 1 },
    ],
    cells: (object) => [
      object.metadata.name,
      (object.status as { phase?: string } | undefined)?.phase ?? '',
      (object.spec as { nodeName?: string }).nodeName ?? '<none>',
    ],
  },
};

export const testDeployments: ResourceDefinition = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  singular: 'deployment',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status', 'scale'],
  hasStatus: true,
  decode,
  validate(object) {
    const replicas = (object.spec as { replicas?: number } | undefined)?.replicas;
    return replicas !== undefined && replicas < 0
      ? [{ type: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${replicas}: must be greater than or equal to 0` }]
      : [];
  },
};

export const testConfigMaps: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  resource: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  decode,
};

export const TEST_DEFINITIONS = [testNamespaces, testPods, testDeployments, testConfigMaps];
