import type { ObjectMeta, OwnerReference, StatusCause } from '../types.js';
import { semanticEqual } from './equality.js';
import { child, forbidden, GoLiteral, goQuote, goStringSlice, invalid, required, tooLong, validateNonnegative } from './field.js';
import { isDNS1123Label, isQualifiedName, isValidLabelValue, type NameValidator } from './names.js';

/** The total size of an object's annotations (keys and values, in bytes) may not exceed 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';

const sortedKeys = (map: Record<string, unknown>) => Object.keys(map).sort();

export function validateQualifiedName(value: string, field: string): StatusCause[] {
  return isQualifiedName(value).map((message) => invalid(field, value, message));
}

export const validateLabelName = validateQualifiedName;

/** Label keys must be qualified names and values valid label values; both report the map's path. */
export function validateLabels(labels: Record<string, string> | undefined, field: string): StatusCause[] {
  if (!labels) return [];
  const causes: StatusCause[] = [];
  for (const name of sortedKeys(labels)) {
    causes.push(...validateLabelName(name, field));
    const value = labels[name]!;
    causes.push(...isValidLabelValue(value).map((message) => invalid(field, value, message)));
  }
  return causes;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, field: string): StatusCause[] {
  if (!annotations) return [];
  const causes: StatusCause[] = [];
  let size = 0;
  for (const name of sortedKeys(annotations)) {
    // Annotation keys are qualified names, except that case does not matter.
    causes.push(...isQualifiedName(name.toLowerCase()).map((message) => invalid(field, name, message)));
    size += Buffer.byteLength(name) + Buffer.byteLength(annotations[name] ?? '');
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) causes.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT));
  return causes;
}

function goOwnerReferences(references: OwnerReference[]): GoLiteral {
  const items = references.map(
    (r) =>
      `v1.OwnerReference{APIVersion:${goQuote(r.apiVersion ?? '')}, Kind:${goQuote(r.kind ?? '')}, Name:${goQuote(r.name ?? '')}, UID:${goQuote(r.uid ?? '')}, Controller:${r.controller ?? 'nil'}, BlockOwnerDeletion:${r.blockOwnerDeletion ?? 'nil'}}`,
  );
  return new GoLiteral(`[]v1.OwnerReference{${items.join(', ')}}`);
}

/** The version of an apiVersion ("apps/v1" → "v1", "v1" → "v1"); "" when it cannot be parsed, as in Go. */
function versionOf(apiVersion: string): string {
  const parts = apiVersion.split('/');
  return parts.length > 2 ? '' : parts[parts.length - 1]!;
}

/** Each reference names its owner completely; at most one is the controller. Errors name the list, not an index. */
export function validateOwnerReferences(references: OwnerReference[] | undefined, field: string): StatusCause[] {
  if (!references) return [];
  const causes: StatusCause[] = [];
  let firstController = '';
  for (const ref of references) {
    if (!versionOf(ref.apiVersion ?? '')) causes.push(invalid(child(field, 'apiVersion'), ref.apiVersion ?? '', 'version must not be empty'));
    if (!ref.kind) causes.push(invalid(child(field, 'kind'), ref.kind ?? '', 'kind must not be empty'));
    if (!ref.name) causes.push(invalid(child(field, 'name'), ref.name ?? '', 'name must not be empty'));
    if (!ref.uid) causes.push(invalid(child(field, 'uid'), ref.uid ?? '', 'uid must not be empty'));
    if (ref.controller) {
      const name = `${ref.kind}/${ref.name}`;
      if (firstController) {
        causes.push(
          invalid(
            field,
            goOwnerReferences(references),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${name}`,
          ),
        );
      } else {
        firstController = name;
      }
    }
  }
  return causes;
}

export function validateFinalizers(finalizers: string[] | undefined, field: string): StatusCause[] {
  if (!finalizers) return [];
  const causes: StatusCause[] = [];
  for (const finalizer of finalizers) causes.push(...isQualifiedName(finalizer).map((message) => invalid(field, finalizer, message)));
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    causes.push(invalid(field, goStringSlice(finalizers), `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return causes;
}

export interface ObjectMetaRules {
  /** Whether the kind lives in a namespace. */
  namespaced: boolean;
  /** How the kind's names are checked (DNS subdomain for most kinds, DNS label for namespaces). */
  name: NameValidator;
}

/** ValidateObjectMeta: names, namespace, labels, annotations, owner references, finalizers. */
export function validateObjectMeta(meta: ObjectMeta | undefined, rules: ObjectMetaRules, field = 'metadata'): StatusCause[] {
  const m = meta ?? {};
  const causes: StatusCause[] = [];
  if (m.generateName) {
    causes.push(...rules.name(m.generateName, true).map((message) => invalid(child(field, 'generateName'), m.generateName, message)));
  }
  if (!m.name) causes.push(required(child(field, 'name'), 'name or generateName is required'));
  else causes.push(...rules.name(m.name, false).map((message) => invalid(child(field, 'name'), m.name, message)));
  if (rules.namespaced) {
    if (!m.namespace) causes.push(required(child(field, 'namespace')));
    else causes.push(...isDNS1123Label(m.namespace).map((message) => invalid(child(field, 'namespace'), m.namespace, message)));
  } else if (m.namespace) {
    causes.push(forbidden(child(field, 'namespace'), 'not allowed on this type'));
  }
  causes.push(...validateNonnegative(m.generation, child(field, 'generation')));
  causes.push(...validateLabels(m.labels, child(field, 'labels')));
  causes.push(...validateAnnotations(m.annotations, child(field, 'annotations')));
  causes.push(...validateOwnerReferences(m.ownerReferences, child(field, 'ownerReferences')));
  causes.push(...validateFinalizers(m.finalizers, child(field, 'finalizers')));
  return causes;
}

/** ValidateImmutableField: `<field>: Invalid value: <new>: field is immutable`. */
export function validateImmutable(value: unknown, old: unknown, field: string, printed: unknown = value): StatusCause[] {
  return semanticEqual(value, old) ? [] : [invalid(field, printed, 'field is immutable')];
}

/** ValidateObjectMetaUpdate: identity stays, generation never goes back, no new finalizers while deleting. */
export function validateObjectMetaUpdate(meta: ObjectMeta | undefined, old: ObjectMeta | undefined, field = 'metadata'): StatusCause[] {
  const m = meta ?? {};
  const o = old ?? {};
  const causes: StatusCause[] = [];
  if (o.deletionTimestamp) {
    const added = (m.finalizers ?? []).filter((f) => !(o.finalizers ?? []).includes(f));
    if (added.length) {
      causes.push(
        forbidden(
          child(field, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice([...new Set(added)].sort()).text}`,
        ),
      );
    }
  }
  if ((m.generation ?? 0) < (o.generation ?? 0)) causes.push(invalid(child(field, 'generation'), m.generation ?? 0, 'must not be decremented'));
  causes.push(...validateImmutable(m.name ?? '', o.name ?? '', child(field, 'name')));
  causes.push(...validateImmutable(m.namespace ?? '', o.namespace ?? '', child(field, 'namespace')));
  // A body without a uid keeps the stored one; only a different uid is a change.
  if (m.uid) causes.push(...validateImmutable(m.uid, o.uid ?? '', child(field, 'uid')));
  return causes;
}
