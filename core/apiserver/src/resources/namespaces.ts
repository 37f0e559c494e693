import { defaultNamespace, namespaceSchema, validateNamespace, type KubeObject, type Namespace } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { age, AGE_COLUMN, column, NAME_COLUMN } from './columns.js';
import { selectorField } from './field-selectors.js';
import { decoderFor, restore, splitSpecAndStatus } from './lifecycle.js';

/** The finalizer the namespace controller removes once everything in the namespace is gone. */
export const NAMESPACE_FINALIZER = 'kubernetes';

const splitStatus = splitSpecAndStatus();

export const namespaces: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  resource: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  shortNames: ['ns'],
  subresources: ['status', 'finalize'],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  hasStatus: true,
  decode: decoderFor(namespaceSchema),
  defaults: (object) => defaultNamespace(object as Namespace),
  validate: (object, old) => validateNamespace(object as Namespace, old as Namespace | undefined),
  prepareForCreate(object) {
    const namespace = object as Namespace;
    namespace.status = { phase: 'Active' };
    const finalizers = namespace.spec?.finalizers ?? [];
    namespace.spec = { ...namespace.spec, finalizers: finalizers.includes(NAMESPACE_FINALIZER) ? finalizers : [...finalizers, NAMESPACE_FINALIZER] };
  },
  prepareForUpdate(object, old, subresource) {
    splitStatus(object, old, subresource);
    // spec.finalizers change only through the finalize subresource.
    if (subresource === '') {
      const spec = ((object as Namespace).spec ??= {});
      restore(spec, (old as Namespace).spec ?? {}, 'finalizers');
    }
  },
  fieldSelectors: {
    'status.phase': selectorField<Namespace>((ns) => ns.status?.phase),
  },
  table: {
    columns: [NAME_COLUMN, column('Status', 'The status of the namespace'), AGE_COLUMN],
    cells: (object: KubeObject, now: number) => [object.metadata.name, (object as Namespace).status?.phase ?? '', age(object, now)],
  },
};
