import { isJsonObject } from '../guards.js';
import { MAX_NESTING_DEPTH } from '../limits.js';
import { SPECIAL, type MessageLookup, type ProtoFieldFacts, type ProtoMessageFacts } from './decode.js';
import { WIRE_TYPE, WireError, WireWriter } from './wire.js';

const RAW_JSON = new Set<string>([SPECIAL.FIELDS_V1, SPECIAL.RAW_EXTENSION, SPECIAL.JSON]);

const VARINT = new Set(['int32', 'int64', 'uint32', 'uint64', 'enum', 'bool']);

/**
 * Encodes an object in its JSON form as protobuf message `typeName` — the inverse of decodeMessage:
 * fields in number order as Go writes them, map entries sorted by key, repeated scalars unpacked
 * (proto2). Fields the facts do not know are left out; a value of the wrong type is a WireError
 * naming its path.
 */
export function encodeMessage(lookup: MessageLookup, typeName: string, object: Record<string, unknown>): Uint8Array {
  return writeObject(lookup, typeName, object, ROOT, 1).finish();
}

/**
 * Where a value sits, for error messages only: a chain of segments joined when an error is reported, so
 * encoding a large list builds no path strings.
 */
interface Path {
  parent: Path | undefined;
  segment: string;
}
const ROOT: Path = { parent: undefined, segment: '' };
const child = (parent: Path, segment: string): Path => ({ parent, segment });
function pathText(path: Path): string {
  const segments: string[] = [];
  for (let at: Path | undefined = path; at && at !== ROOT; at = at.parent) segments.push(at.segment);
  return segments.reverse().reduce((text, segment) => (segment.startsWith('[') || !text ? text + segment : `${text}.${segment}`), '');
}

/** A message's JSON fields in field-number order and by name, worked out once per message type. */
interface FieldOrder {
  all: readonly ProtoFieldFacts[];
  byName: ReadonlyMap<string, ProtoFieldFacts>;
  /** An inline field reads the object's own keys, so every field is looked at. */
  inline: boolean;
}
const orders = new WeakMap<ProtoMessageFacts, FieldOrder>();
function fieldOrder(facts: ProtoMessageFacts): FieldOrder {
  let order = orders.get(facts);
  if (!order) {
    const all = facts.fields.filter((field) => !field.notInJson).sort((a, b) => a.number - b.number);
    order = { all, byName: new Map(all.map((field) => [field.name, field])), inline: all.some((field) => field.inline) };
    orders.set(facts, order);
  }
  return order;
}
const byNumber = (a: ProtoFieldFacts, b: ProtoFieldFacts) => a.number - b.number;

/**
 * The fields `object` sets, in number order. Objects usually set few of their message's fields (a container
 * sets 5 of 25), so the object's own keys are looked up when they are fewer; keys the facts do not know are
 * left out, as when every field is walked.
 */
function presentFields(order: FieldOrder, object: Record<string, unknown>): readonly ProtoFieldFacts[] {
  if (order.inline) return order.all;
  const keys = Object.keys(object);
  if (keys.length * 2 >= order.all.length) return order.all;
  const present: ProtoFieldFacts[] = [];
  for (const key of keys) {
    const field = order.byName.get(key);
    if (field) present.push(field);
  }
  return present.sort(byNumber);
}

function writeObject(lookup: MessageLookup, typeName: string, object: Record<string, unknown>, path: Path, depth: number): WireWriter {
  if (depth > MAX_NESTING_DEPTH) throw new WireError(`the object nests more than ${MAX_NESTING_DEPTH} levels deep (at ${pathText(path)})`);
  const facts = lookup(typeName);
  if (!facts) throw new WireError(`no protobuf definition for ${typeName}${path !== ROOT ? ` (at ${pathText(path)})` : ''}`);
  const writer = new WireWriter();
  for (const field of presentFields(fieldOrder(facts), object)) {
    // An inline message takes its fields from this same object.
    const value = field.inline ? object : object[field.name];
    if (value === undefined || value === null) continue;
    const where = child(path, field.name);
    if (field.map) writeMap(lookup, writer, field, value, where, depth);
    else if (field.repeated) {
      if (!Array.isArray(value)) throw new WireError(`expected a list (at ${pathText(where)})`);
      for (let index = 0; index < value.length; index++) writeValue(lookup, writer, field.number, field.type, value[index], child(where, `[${index}]`), depth);
    } else writeValue(lookup, writer, field.number, field.type, value, where, depth);
  }
  return writer;
}

function writeMap(lookup: MessageLookup, writer: WireWriter, field: ProtoFieldFacts, value: unknown, path: Path, depth: number): void {
  if (!isJsonObject(value)) throw new WireError(`expected an object (at ${pathText(path)})`);
  for (const key of Object.keys(value).sort()) {
    const entry = new WireWriter();
    writeValue(lookup, entry, 1, field.map!.key, key, path, depth);
    writeValue(lookup, entry, 2, field.map!.value, value[key], child(path, `[${key}]`), depth);
    writer.tag(field.number, WIRE_TYPE.LENGTH_DELIMITED).message(entry);
  }
}

function writeValue(lookup: MessageLookup, writer: WireWriter, number: number, type: string, value: unknown, path: Path, depth: number): void {
  const fail = (expected: string): never => {
    throw new WireError(`expected ${expected}, got ${JSON.stringify(value)} (at ${pathText(path)})`);
  };
  if (type === 'string') {
    writer.tag(number, WIRE_TYPE.LENGTH_DELIMITED).string(typeof value === 'string' ? value : fail('a string'));
  } else if (VARINT.has(type)) {
    const numeric =
      type === 'bool'
        ? typeof value === 'boolean'
          ? Number(value)
          : fail('a boolean')
        : typeof value === 'number' && Number.isInteger(value)
          ? value
          : fail('an integer');
    writer.tag(number, WIRE_TYPE.VARINT).varint(numeric);
  } else if (type === 'double' || type === 'float') {
    if (typeof value !== 'number') fail('a number');
    writer.tag(number, WIRE_TYPE.FIXED64).double(value as number);
  } else if (type === 'bytes') {
    writer.tag(number, WIRE_TYPE.LENGTH_DELIMITED).bytesField(Buffer.from(typeof value === 'string' ? value : fail('base64 text'), 'base64'));
  } else writer.tag(number, WIRE_TYPE.LENGTH_DELIMITED).message(special(type, value, path) ?? objectOf(lookup, type, value, path, depth));
}

function objectOf(lookup: MessageLookup, type: string, value: unknown, path: Path, depth: number): WireWriter {
  if (Array.isArray(value) && lookup(type)?.sliceWrapper) return writeObject(lookup, type, { items: value }, path, depth + 1);
  if (!isJsonObject(value)) throw new WireError(`expected an object (at ${pathText(path)})`);
  return writeObject(lookup, type, value, path, depth + 1);
}

/** The special apimachinery messages, from their JSON values. */
const SPECIAL_TYPES = new Set<string>(Object.values(SPECIAL));

function special(type: string, value: unknown, path: Path): WireWriter | undefined {
  if (!SPECIAL_TYPES.has(type)) return undefined;
  const writer = new WireWriter(16);
  if (type === SPECIAL.QUANTITY) return writer.tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(String(value));
  if (type === SPECIAL.INT_OR_STRING) {
    if (typeof value === 'number') return writer.tag(1, WIRE_TYPE.VARINT).varint(0).tag(2, WIRE_TYPE.VARINT).varint(value);
    return writer.tag(1, WIRE_TYPE.VARINT).varint(1).tag(3, WIRE_TYPE.LENGTH_DELIMITED).string(String(value));
  }
  if (type === SPECIAL.TIME || type === SPECIAL.MICRO_TIME) {
    // Go's zero time (null in JSON, inside maps and lists) is an empty message.
    if (value === null) return writer;
    const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms)) throw new WireError(`expected an RFC 3339 time, got ${JSON.stringify(value)} (at ${pathText(path)})`);
    const seconds = Math.floor(ms / 1000);
    const micros = type === SPECIAL.MICRO_TIME ? Number(/\.(\d{1,9})/.exec(value as string)?.[1]?.padEnd(9, '0') ?? 0) : 0;
    writer.tag(1, WIRE_TYPE.VARINT).varint(seconds);
    return micros ? writer.tag(2, WIRE_TYPE.VARINT).varint(micros) : writer;
  }
  if (type === SPECIAL.DURATION) return writer.tag(1, WIRE_TYPE.VARINT).varint(parseGoDuration(value, path));
  if (RAW_JSON.has(type)) return writer.tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(JSON.stringify(value));
  return undefined;
}

const UNIT_NANOS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration: "1h2m3.5s", "-1.5h", "300ms". */
function parseGoDuration(value: unknown, path: Path): number {
  const text = typeof value === 'string' ? value : '';
  const match = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!match) {
    if (text === '0') return 0;
    throw new WireError(`expected a duration like "1m30s", got ${JSON.stringify(value)} (at ${pathText(path)})`);
  }
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(amount) * UNIT_NANOS[unit!]!;
  return Math.round(match[1] === '-' ? -total : total);
}
