import { isJsonObject } from '../guards.js';
import { MAX_NESTING_DEPTH } from '../limits.js';
import { WIRE_TYPE, WireError, WireReader } from './wire.js';

/** One field of a message, as the API facts table records it (generated from upstream's .proto files). */
export interface ProtoFieldFacts {
  /** The JSON name. */
  name: string;
  number: number;
  /** A scalar type (`string`, `int64`, `bytes`…) or a message's full name (`k8s.io.api.core.v1.PodSpec`). */
  type: string;
  repeated?: boolean;
  /** For map fields: the key and value types (on the wire, a repeated entry message with fields 1 and 2). */
  map?: { key: string; value: string };
  /** Go's `json:",inline"`: the embedded message's fields sit directly in this object's JSON. */
  inline?: boolean;
  /** Go's `json:"-"`: carried in protobuf only. */
  notInJson?: boolean;
  /** Go's `omitempty`: a zero value is left out of JSON (unless the field is a pointer, which was set). */
  omitEmpty?: boolean;
  pointer?: boolean;
}

export interface ProtoMessageFacts {
  name: string;
  fields: readonly ProtoFieldFacts[];
  /** A named Go slice: its JSON form is the array in its `items` field. */
  sliceWrapper?: boolean;
}

export type MessageLookup = (fullName: string) => ProtoMessageFacts | undefined;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Messages whose JSON form is not an object of their fields. */
export const SPECIAL = Object.freeze({
  QUANTITY: 'k8s.io.apimachinery.pkg.api.resource.Quantity',
  INT_OR_STRING: 'k8s.io.apimachinery.pkg.util.intstr.IntOrString',
  TIME: `${META}.Time`,
  MICRO_TIME: `${META}.MicroTime`,
  DURATION: `${META}.Duration`,
  FIELDS_V1: `${META}.FieldsV1`,
  RAW_EXTENSION: 'k8s.io.apimachinery.pkg.runtime.RawExtension',
  JSON: 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON',
});

/**
 * Decodes one protobuf-encoded object of message `typeName` into the JSON form Kubernetes uses for it:
 * fields by their JSON names, int64s as numbers, bytes as base64, and the special types (quantities,
 * int-or-string, times, durations, raw JSON) as their JSON values. Absent fields stay absent. Unknown
 * field numbers are skipped, as protobuf allows. Throws a WireError naming the field path on bad input.
 */
export function decodeMessage(lookup: MessageLookup, typeName: string, bytes: Uint8Array): Record<string, unknown> {
  const decoded = decodeObject(lookup, typeName, bytes, '', 1);
  // A list wrapper reads as its bare list inside another message; on its own it keeps its items field.
  return Array.isArray(decoded) ? { items: decoded } : decoded;
}

function decodeObject(lookup: MessageLookup, typeName: string, bytes: Uint8Array, path: string, depth: number): Record<string, unknown> | unknown[] {
  if (depth > MAX_NESTING_DEPTH) throw new WireError(`the object nests more than ${MAX_NESTING_DEPTH} levels deep (at ${path})`);
  const facts = lookup(typeName);
  if (!facts) throw new WireError(`no protobuf definition for ${typeName}${path ? ` (at ${path})` : ''}`);
  const byNumber = fieldsByNumber(facts);
  const out: Record<string, unknown> = {};
  const reader = new WireReader(bytes);
  while (!reader.done) {
    const { field: number, wireType } = reader.tag();
    const field = byNumber.get(number);
    if (!field || field.notInJson) {
      reader.skip(wireType);
      continue;
    }
    const where = path ? `${path}.${field.name}` : field.name;
    try {
      if (field.map) {
        const entry = reader.bytesField();
        const [key, value] = decodeMapEntry(lookup, field.map, entry, where, depth);
        const map = out[field.name];
        if (isJsonObject(map)) map[String(key)] = value;
        else {
          const created: Record<string, unknown> = {};
          created[String(key)] = value;
          out[field.name] = created;
        }
      } else if (field.repeated) {
        const list = (out[field.name] ??= []) as unknown[];
        if (wireType === WIRE_TYPE.LENGTH_DELIMITED && isPackable(field.type)) {
          const packed = new WireReader(reader.bytesField());
          while (!packed.done) list.push(readScalar(packed, field.type));
        } else list.push(readValue(lookup, reader, field.type, wireType, `${where}[${list.length}]`, depth));
      } else if (field.inline) {
        const embedded = readValue(lookup, reader, field.type, wireType, path, depth);
        if (embedded && typeof embedded === 'object') Object.assign(out, embedded);
      } else {
        const value = readValue(lookup, reader, field.type, wireType, where, depth);
        // Go's protobuf writes non-pointer zero values; its JSON leaves them out where the tag says omitempty.
        if (field.omitEmpty && !field.pointer && isZero(value)) delete out[field.name];
        else out[field.name] = value;
      }
    } catch (err) {
      if (err instanceof WireError && !err.message.includes(' (at ')) throw new WireError(`${err.message} (at ${where})`);
      throw err;
    }
  }
  return facts.sliceWrapper ? ((out.items as unknown[] | undefined) ?? []) : out;
}

function isZero(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

/** Each message's fields by number, built once per message (facts are long-lived and frozen). */
const indexes = new WeakMap<ProtoMessageFacts, Map<number, ProtoFieldFacts>>();
function fieldsByNumber(facts: ProtoMessageFacts): Map<number, ProtoFieldFacts> {
  let index = indexes.get(facts);
  if (!index) indexes.set(facts, (index = new Map(facts.fields.map((field) => [field.number, field]))));
  return index;
}

function decodeMapEntry(lookup: MessageLookup, map: { key: string; value: string }, bytes: Uint8Array, path: string, depth: number): [unknown, unknown] {
  const reader = new WireReader(bytes);
  let key: unknown = defaultOf(map.key);
  let value: unknown = defaultOf(map.value);
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (field === 1) key = readValue(lookup, reader, map.key, wireType, path, depth);
    else if (field === 2) value = readValue(lookup, reader, map.value, wireType, `${path}[${String(key)}]`, depth);
    else reader.skip(wireType);
  }
  return [key, value];
}

/** What an absent map key or value means in Go: the zero value. */
function defaultOf(type: string): unknown {
  if (type === 'string' || type === 'bytes') return '';
  if (type === 'bool') return false;
  if (SCALARS.has(type)) return 0;
  return {};
}

const VARINT_SCALARS = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool', 'enum']);
const SCALARS = new Set([...VARINT_SCALARS, 'double', 'float', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'string', 'bytes']);

function isPackable(type: string): boolean {
  return SCALARS.has(type) && type !== 'string' && type !== 'bytes';
}

function readScalar(reader: WireReader, type: string): unknown {
  switch (type) {
    case 'int32':
    case 'int64':
      return reader.signedVarint();
    case 'uint32':
    case 'uint64':
    case 'enum':
      return reader.varint();
    case 'sint32':
    case 'sint64': {
      const zigzag = reader.varint();
      return zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
    }
    case 'bool':
      return reader.varint() !== 0;
    case 'double':
      return reader.double();
    case 'float':
      return reader.float();
    case 'fixed64':
    case 'sfixed64':
      return reader.fixed64();
    case 'fixed32':
    case 'sfixed32':
      return reader.fixed32();
    case 'string':
      return reader.string();
    case 'bytes':
      return Buffer.from(reader.bytesField()).toString('base64');
    default:
      throw new WireError(`unknown scalar type ${type}`);
  }
}

const EXPECTED_WIRE_TYPE: Record<string, number> = {
  double: WIRE_TYPE.FIXED64,
  fixed64: WIRE_TYPE.FIXED64,
  sfixed64: WIRE_TYPE.FIXED64,
  float: WIRE_TYPE.FIXED32,
  fixed32: WIRE_TYPE.FIXED32,
  sfixed32: WIRE_TYPE.FIXED32,
  string: WIRE_TYPE.LENGTH_DELIMITED,
  bytes: WIRE_TYPE.LENGTH_DELIMITED,
};

function readValue(lookup: MessageLookup, reader: WireReader, type: string, wireType: number, path: string, depth: number): unknown {
  if (SCALARS.has(type)) {
    const expected = EXPECTED_WIRE_TYPE[type] ?? WIRE_TYPE.VARINT;
    if (wireType !== expected) throw new WireError(`wire type ${wireType} does not fit a ${type} field`);
    return readScalar(reader, type);
  }
  if (wireType !== WIRE_TYPE.LENGTH_DELIMITED) throw new WireError(`wire type ${wireType} does not fit an embedded ${type}`);
  const bytes = reader.bytesField();
  switch (type) {
    case SPECIAL.QUANTITY:
      return stringField(bytes, 1);
    case SPECIAL.INT_OR_STRING:
      return intOrString(bytes);
    case SPECIAL.TIME:
      return formatTime(bytes, false);
    case SPECIAL.MICRO_TIME:
      return formatTime(bytes, true);
    case SPECIAL.DURATION:
      return goDuration(varintField(bytes, 1) ?? 0);
    case SPECIAL.FIELDS_V1:
    case SPECIAL.RAW_EXTENSION:
    case SPECIAL.JSON:
      return rawJson(bytes);
    default:
      return decodeObject(lookup, type, bytes, path, depth + 1);
  }
}

/** Reads the fields of a small special message as raw tag → value pairs. */
function fieldsOf(bytes: Uint8Array): Map<number, { wireType: number; value: number | Uint8Array }> {
  const fields = new Map<number, { wireType: number; value: number | Uint8Array }>();
  const reader = new WireReader(bytes);
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (wireType === WIRE_TYPE.VARINT) fields.set(field, { wireType, value: reader.signedVarint() });
    else if (wireType === WIRE_TYPE.LENGTH_DELIMITED) fields.set(field, { wireType, value: reader.bytesField() });
    else reader.skip(wireType);
  }
  return fields;
}

function stringField(bytes: Uint8Array, number: number): string {
  const value = fieldsOf(bytes).get(number)?.value;
  return value instanceof Uint8Array ? new TextDecoder('utf-8', { fatal: true }).decode(value) : '';
}

function varintField(bytes: Uint8Array, number: number): number | undefined {
  const value = fieldsOf(bytes).get(number)?.value;
  return typeof value === 'number' ? value : undefined;
}

/** IntOrString: type (1: 0 int, 1 string), intVal (2), strVal (3). */
function intOrString(bytes: Uint8Array): number | string {
  const fields = fieldsOf(bytes);
  if (fields.get(1)?.value === 1) return stringField(bytes, 3);
  const value = fields.get(2)?.value;
  return typeof value === 'number' ? value : 0;
}

/** Time and MicroTime: seconds (1) and nanos (2) since the epoch, as RFC 3339 in UTC; no bytes at all is Go's zero time, null in JSON. */
function formatTime(bytes: Uint8Array, micro: boolean): string | null {
  if (bytes.length === 0) return null;
  const fields = fieldsOf(bytes);
  const seconds = Number(fields.get(1)?.value ?? 0);
  const nanos = Number(fields.get(2)?.value ?? 0);
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${iso}Z`;
}

/** Raw JSON bytes (FieldsV1, RawExtension, apiextensions JSON) as the value they hold. */
function rawJson(bytes: Uint8Array): unknown {
  const raw = fieldsOf(bytes).get(1)?.value;
  if (!(raw instanceof Uint8Array) || raw.length === 0) return null;
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new WireError('an embedded raw object is not valid JSON');
  }
}

const NANOS = { hour: 3_600_000_000_000, minute: 60_000_000_000, second: 1_000_000_000, milli: 1_000_000, micro: 1_000 };

/** Go's time.Duration String(): "1h2m3.5s", "1.5s", "500ms", "0s". */
export function goDuration(nanoseconds: number): string {
  if (nanoseconds === 0) return '0s';
  const sign = nanoseconds < 0 ? '-' : '';
  const ns = Math.abs(nanoseconds);
  const fraction = (value: number, unit: number) => {
    const whole = Math.floor(value / unit);
    const rest = value % unit;
    if (rest === 0) return String(whole);
    const digits = String(unit).length - 1;
    return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
  };
  if (ns < NANOS.micro) return `${sign}${ns}ns`;
  if (ns < NANOS.milli) return `${sign}${fraction(ns, NANOS.micro)}µs`;
  if (ns < NANOS.second) return `${sign}${fraction(ns, NANOS.milli)}ms`;
  const hours = Math.floor(ns / NANOS.hour);
  const minutes = Math.floor((ns % NANOS.hour) / NANOS.minute);
  const seconds = fraction(ns % NANOS.minute, NANOS.second);
  if (hours) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
