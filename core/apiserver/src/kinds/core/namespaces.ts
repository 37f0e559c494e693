// Namespaces: their defaults, their rules, and the finalizer that keeps one until it is empty.
import { defineKind, RESOURCES, restoreField, type Namespace, type StatusCause } from '@skiff/api';
import { fieldErrors, isQualifiedName, nameIsDNSLabel, validateObjectMeta, validateObjectMetaUpdate } from '@skiff/api/validation';
import { AGE_COLUMN, column } from '../columns.js';
import { selectorField } from '../field-selectors.js';

/** The finalizer the namespace controller removes once everything in the namespace is gone. */
export const NAMESPACE_FINALIZER = 'kubernetes';

/** The label every namespace carries with its own name, so selectors can pick namespaces by name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * The name label and the Active phase. The `kubernetes` finalizer is added on create only
 * (prepareForCreate), since finalizing removes it for good.
 */
export function defaultNamespace(namespace: Namespace): void {
  const name = namespace.metadata?.name;
  if (name) namespace.metadata.labels = { ...{}, ...namespace.metadata.labels, [NAMESPACE_NAME_LABEL]: name };
  const status = (namespace.status ??= {});
  if (!status.phase) status.phase = 'Active';
}

/** Finalizer names without a domain that Kubernetes defines itself. */
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

function validateNamespaceFinalizer(name: string, field: string): StatusCause[] {
  const causes = isQualifiedName(name).map((message) => fieldErrors.invalid(field, name, message));
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
    causes.push(fieldErrors.invalid(field, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return causes;
}

/** Namespace names are DNS labels; spec.finalizers are standard or domain-qualified. */
export function validateNamespace(namespace: Namespace, old?: Namespace): StatusCause[] {
  const causes = validateObjectMeta(namespace.metadata, { namespaced: false, name: nameIsDNSLabel });
  for (const finalizer of namespace.spec?.finalizers ?? []) causes.push(...validateNamespaceFinalizer(finalizer, 'spec.finalizers'));
  if (old) causes.push(...validateObjectMetaUpdate(namespace.metadata, old.metadata));
  return causes;
}

export const namespaces = defineKind<Namespace>({
  ...{},
  ...RESOURCES.namespaces,
  subresources: ['status', 'finalize'],
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  names: 'dns-label',
  columns: [column('Status', '.status.phase'), AGE_COLUMN],
  strategy: {
    defaults: defaultNamespace,
    validateAll: validateNamespace,
    prepareForCreate(namespace) {
      namespace.status = { phase: 'Active' };
      const finalizers = namespace.spec?.finalizers ?? [];
      namespace.spec = { ...{}, ...namespace.spec, finalizers: finalizers.includes(NAMESPACE_FINALIZER) ? finalizers : [...finalizers, NAMESPACE_FINALIZER] };
    },
    // spec.finalizers change only through the finalize subresource.
    prepareForUpdate(namespace, old, subresource) {
      if (subresource === '') restoreField((namespace.spec ??= {}), old.spec ?? {}, 'finalizers');
    },
    fieldSelectors: { 'status.phase': selectorField<Namespace>((ns) => ns.status?.phase) },
    deletionFinalizers: (namespace) => namespace.spec?.finalizers ?? [],
    onDeletionMarked(namespace) {
      namespace.status = { ...{}, ...namespace.status, phase: 'Terminating' };
    },
  },
});
