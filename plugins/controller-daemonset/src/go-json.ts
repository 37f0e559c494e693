import { formatQuantity, isJsonObject, type Quantity } from '@skiff/api';
import { messageFacts, type ApiFieldFacts } from '@skiff/api/schema';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const TIME = `${META}.Time`;
const MICRO_TIME = `${META}.MicroTime`;
const DURATION = `${META}.Duration`;
/** Types Go writes as the JSON they hold. */
const RAW_JSON = new Set([`${META}.FieldsV1`, 'k8s.io.apimachinery.pkg.runtime.RawExtension', 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON']);

/**
 * A value of the API type `typeName` as Go writes it after reading it into its typed struct and then
 * into a generic map, the round trip kube-controller-manager's DaemonSet controller makes for its
 * ControllerRevision data: fields Go does not know are dropped; fields without `omitempty` are always
 * written, with their zero value (`""`, `0`, `false`, `null`) when absent; struct values are never left
 * out (`resources: {}`, `creationTimestamp: null`); empty lists and maps under `omitempty` are; quantities
 * take their canonical form; object keys are sorted, as Go writes a map.
 */
export function goJson(typeName: string, value: unknown): unknown {
  switch (typeName) {
    case QUANTITY:
      return value === undefined || value === null ? '0' : formatQuantity(value as Quantity);
    case INT_OR_STRING:
      return value ?? 0;
    case TIME:
      return typeof value === 'string' && value ? goTime(value, 0) : null;
    case MICRO_TIME:
      return typeof value === 'string' && value ? goTime(value, 6) : null;
    case DURATION:
      return value ?? '0s';
  }
  if (RAW_JSON.has(typeName)) return value === undefined ? null : sortedKeys(value);
  const message = messageFacts(typeName);
  if (!message) return sortedKeys(value);
  if (message.sliceWrapper) return goField(message.fields[0]!, value);
  const object = isJsonObject(value) ? value : {};
  const out: Record<string, unknown> = {};
  writeFields(typeName, object, out);
  return sortedKeys(out);
}

/** Writes the message's fields, those of inlined members included (the outer field wins a name clash, as in Go). */
function writeFields(typeName: string, object: Record<string, unknown>, out: Record<string, unknown>): void {
  for (const field of messageFacts(typeName)?.fields ?? []) {
    if (field.notInJson) continue;
    if (field.inline) {
      const inlined: Record<string, unknown> = {};
      writeFields(field.type, object, inlined);
      for (const [key, value] of Object.entries(inlined)) if (!Object.hasOwn(out, key)) out[key] = value;
      continue;
    }
    const written = goField(field, object[field.name]);
    if (written !== OMITTED) out[field.name] = written;
  }
}

const OMITTED = Symbol('omitted');

function goField(field: ApiFieldFacts, value: unknown): unknown {
  const absent = value === undefined || value === null;
  if (field.repeated || field.map) {
    // A nil slice or map: left out under omitempty, else null; an empty one is left out under omitempty.
    if (absent) return field.omitEmpty ? OMITTED : null;
    if (field.repeated && Array.isArray(value)) {
      if (value.length === 0 && field.omitEmpty) return OMITTED;
      return value.map((item) => goScalarOrMessage(field.type, item));
    }
    if (field.map && isJsonObject(value)) {
      const entries = Object.entries(value);
      if (entries.length === 0 && field.omitEmpty) return OMITTED;
      return sortedKeys(Object.fromEntries(entries.map(([key, item]) => [key, goScalarOrMessage(field.map!.value, item)])));
    }
    return value;
  }
  if (field.pointer && absent) return field.omitEmpty ? OMITTED : null;
  // A struct (every message, the special ones included) is written even when empty.
  if (messageFacts(field.type)) return goJson(field.type, value);
  const written = absent ? zeroOf(field.type) : value;
  if (field.omitEmpty && !field.pointer && isZero(written)) return OMITTED;
  return written;
}

function goScalarOrMessage(type: string, value: unknown): unknown {
  if (messageFacts(type)) return goJson(type, value);
  return value ?? zeroOf(type);
}

function zeroOf(type: string): unknown {
  switch (type) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'bytes':
      return null;
    default:
      return 0;
  }
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false || value === null;
}

/** RFC 3339 in UTC, with `fractionDigits` digits of the second (none for metav1.Time), as Go writes it. */
function goTime(value: string, fractionDigits: number): string {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/i.exec(value);
  if (!match) return value;
  const [, seconds, fraction = '', zone] = match;
  const utc = new Date(`${seconds}${zone!.toUpperCase()}`).toISOString().slice(0, 19);
  return fractionDigits === 0 ? `${utc}Z` : `${utc}.${fraction.padEnd(fractionDigits, '0').slice(0, fractionDigits)}Z`;
}

/** The value with object keys sorted at every level, as Go writes a generic map. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isJsonObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) if (value[key] !== undefined) out[key] = sortedKeys(value[key]);
  return out;
}
