import { isJsonObject } from '../guards.js';
import { MAX_NESTING_DEPTH } from '../limits.js';
import { SPECIAL, type MessageLookup, type ProtoFieldFacts } from './decode.js';
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
  return writeObject(lookup, typeName, object, '', 1).finish();
}

function writeObject(lookup: MessageLookup, typeName: string, object: Record<string, unknown>, path: string, depth: number): WireWriter {
  if (depth > MAX_NESTING_DEPTH) throw new WireError(`the object nests more than ${MAX_NESTING_DEPTH} levels deep (at ${path})`);
  const facts = lookup(typeName);
  if (!facts) throw new WireError(`no protobuf definition for ${typeName}${path ? ` (at ${path})` : ''}`);
  const writer = new WireWriter();
  for (const field of [...facts.fields].sort((a, b) => a.number - b.number)) {
    if (field.notInJson) continue;
    // An inline message takes its fields from this same object.
    const value = field.inline ? object : object[field.name];
    if (value === undefined || value === null) continue;
    const where = path ? `${path}.${field.name}` : field.name;
    if (field.map) writeMap(lookup, writer, field, value, where, depth);
    else if (field.repeated) {
      if (!Array.isArray(value)) throw new WireError(`expected a list (at ${where})`);
      value.forEach((item, index) => writeValue(lookup, writer, field.number, field.type, item, `${where}[${index}]`, depth));
    } else writeValue(lookup, writer, field.number, field.type, value, where, depth);
  }
  return writer;
}

function writeMap(lookup: MessageLookup, writer: WireWriter, field: ProtoFieldFacts, value: unknown, path: string, depth: number): void {
  if (!isJsonObject(value)) throw new WireError(`expected an object (at ${path})`);
  for (const key of Object.keys(value).sort()) {
    const entry = new WireWriter();
    writeValue(lookup, entry, 1, field.map!.key, key, path, depth);
    writeValue(lookup, entry, 2, field.map!.value, value[key], `${path}[${key}]`, depth);
    writer.tag(field.number, WIRE_TYPE.LENGTH_DELIMITED).message(entry);
  }
}

function writeValue(lookup: MessageLookup, writer: WireWriter, number: number, type: string, value: unknown, path: string, depth: number): void {
  const fail = (expected: string): never => {
    throw new WireError(`expected ${expected}, got ${JSON.stringify(value)} (at ${path})`);
  };
  if (VARINT.has(type)) {
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
  } else if (type === 'string') {
    writer.tag(number, WIRE_TYPE.LENGTH_DELIMITED).string(typeof value === 'string' ? value : fail('a string'));
  } else if (type === 'bytes') {
    writer.tag(number, WIRE_TYPE.LENGTH_DELIMITED).bytesField(Buffer.from(typeof value === 'string' ? value : fail('base64 text'), 'base64'));
  } else writer.tag(number, WIRE_TYPE.LENGTH_DELIMITED).message(special(type, value, path) ?? objectOf(lookup, type, value, path, depth));
}

function objectOf(lookup: MessageLookup, type: string, value: unknown, path: string, depth: number): WireWriter {
  if (Array.isArray(value) && lookup(type)?.sliceWrapper) return writeObject(lookup, type, { items: value }, path, depth + 1);
  if (!isJsonObject(value)) throw new WireError(`expected an object (at ${path})`);
  return writeObject(lookup, type, value, path, depth + 1);
}

/** The special apimachinery messages, from their JSON values. */
function special(type: string, value: unknown, path: string): WireWriter | undefined {
  const writer = new WireWriter();
  if (type === SPECIAL.QUANTITY) return writer.tag(1, WIRE_TYPE.LENGTH_DELIMITED).string(String(value));
  if (type === SPECIAL.INT_OR_STRING) {
    if (typeof value === 'number') return writer.tag(1, WIRE_TYPE.VARINT).varint(0).tag(2, WIRE_TYPE.VARINT).varint(value);
    return writer.tag(1, WIRE_TYPE.VARINT).varint(1).tag(3, WIRE_TYPE.LENGTH_DELIMITED).string(String(value));
  }
  if (type === SPECIAL.TIME || type === SPECIAL.MICRO_TIME) {
    // Go's zero time (null in JSON, inside maps and lists) is an empty message.
    if (value === null) return writer;
    const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms)) throw new WireError(`expected an RFC 3339 time, got ${JSON.stringify(value)} (at ${path})`);
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
function parseGoDuration(value: unknown, path: string): number {
  const text = typeof value === 'string' ? value : '';
  const match = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!match) {
    if (text === '0') return 0;
    throw new WireError(`expected a duration like "1m30s", got ${JSON.stringify(value)} (at ${path})`);
  }
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(amount) * UNIT_NANOS[unit!]!;
  return Math.round(match[1] === '-' ? -total : total);
}
