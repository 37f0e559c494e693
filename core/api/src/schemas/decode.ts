import { errors, type ApiError } from '../errors.js';
import { isValidQuantity } from '../quantity.js';
import type { StatusCause } from '../types.js';
import { goTypeName, type ObjectSchema, type Schema } from './language.js';
import type { NumberLiterals, ValuePath } from './number-literals.js';
import { rfc3339Error } from './time.js';

/** The `type` of the causes decoding reports. */
export const DECODE_CAUSE = Object.freeze({
  /** A value of the wrong JSON type, or a malformed quantity or time. */
  typeMismatch: 'FieldValueTypeInvalid',
  /** A field the schema does not declare (an error only with strict field validation). */
  unknownField: 'FieldValueUnknown',
});

export interface DecodeOptions {
  /** Unknown fields are errors (kubectl's `fieldValidation=Strict`), not just reported. */
  strict?: boolean;
  /**
   * Make the value look like Kubernetes' typed decode would leave it: drop unknown fields and null
   * fields, turn nulls inside lists and maps into the element's zero value, and write numeric
   * quantities as strings. Mutates the value in place.
   */
  normalize?: boolean;
  /** How the JSON body wrote its numbers, where that differs from what JSON.parse made of them (`1e3`, `1.0`). */
  numberLiterals?: NumberLiterals;
}

export interface DecodeResult {
  errors: StatusCause[];
  /** JSON paths of fields the schema does not declare: "spec.template.spec.containers[0].foo". */
  unknownFields: string[];
}

const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const INT32 = { min: -2147483648, max: 2147483647 };
// ±2^63: the doubles nearest int64's bounds (JSON numbers are doubles; exact int64 limits are not representable).
const INT64 = { min: -(2 ** 63), max: 2 ** 63 };
/**
 * Why an int64 Go would take is refused: a JavaScript number holds integers exactly only up to 2^53 - 1,
 * and a rounded one would come back to Go clients as a different number (or, near 2^63, one they cannot decode).
 */
const isIntegerLiteral = (literal: string) => /^-?\d+$/.test(literal);

const INEXACT_INT64 = `Skiff keeps integers exactly only between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`;

class MapKey {
  constructor(readonly key: string) {}
}
type Segment = string | number | MapKey;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The JSON type of a value in Go's words: "string", "number", "bool", "array", "object". */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** What Go leaves in a list element or map value that was JSON null; undefined keeps the null. */
function zeroValue(schema: Schema): unknown {
  switch (schema.kind) {
    case 'string':
      return '';
    case 'int32':
    case 'int64':
    case 'number':
    case 'intOrString':
      return 0;
    case 'boolean':
      return false;
    case 'quantity':
      return '0';
    case 'object':
      return {};
    default:
      return undefined;
  }
}

/** An integer field holding a value some notable literal became: judged once the literals at those paths are known. */
interface DeferredInteger {
  path: ValuePath;
  value: number;
  field: string;
  /** The error message given the literal the field was written as (undefined: a plain integer), or undefined if none. */
  judge: (literal: string | undefined) => string | undefined;
}

class Decoder {
  readonly errors: StatusCause[] = [];
  readonly unknownFields: string[] = [];
  private readonly path: Segment[] = [];
  private readonly deferred: DeferredInteger[] = [];

  constructor(private readonly options: DecodeOptions) {}

  /** Checks one value; returns the value to keep in its place (normalisation may replace it). */
  value(schema: Schema, value: unknown, owner: string | undefined): unknown {
    switch (schema.kind) {
      case 'any':
        return value;
      case 'string':
        if (typeof value !== 'string') this.mismatch(value, schema, owner);
        return value;
      case 'boolean':
        if (typeof value !== 'boolean') this.mismatch(value, schema, owner);
        return value;
      case 'number':
        if (typeof value !== 'number') this.mismatch(value, schema, owner);
        return value;
      case 'int32':
      case 'int64':
        this.integer(schema, value, owner, schema.kind === 'int32' ? INT32 : INT64);
        return value;
      case 'quantity':
        return this.quantity(value);
      case 'intOrString':
        this.intOrString(value);
        return value;
      case 'time':
        this.time(value);
        return value;
      case 'array':
        if (!Array.isArray(value)) {
          this.mismatch(value, schema, owner);
          return value;
        }
        for (let i = 0; i < value.length; i++) {
          this.path.push(i);
          value[i] = this.element(schema.items, value[i], owner);
          this.path.pop();
        }
        return value;
      case 'map':
        if (!isPlainObject(value)) {
          this.mismatch(value, schema, owner);
          return value;
        }
        for (const key of Object.keys(value)) {
          this.path.push(new MapKey(key));
          value[key] = this.element(schema.values, value[key], owner);
          this.path.pop();
        }
        return value;
      case 'object':
        if (!isPlainObject(value)) {
          this.mismatch(value, schema, owner);
          return value;
        }
        this.fields(schema, value);
        return value;
    }
  }

  private element(schema: Schema, value: unknown, owner: string | undefined): unknown {
    if (value === null) {
      const zero = this.options.normalize ? zeroValue(schema) : undefined;
      return zero === undefined ? null : zero;
    }
    return this.value(schema, value, owner);
  }

  private fields(schema: ObjectSchema, object: Record<string, unknown>): void {
    for (const key of Object.keys(object)) {
      const field = schema.fields[key];
      const fieldValue = object[key];
      if (field === undefined) {
        this.path.push(key);
        this.unknownField();
        this.path.pop();
        if (this.options.normalize) delete object[key];
        continue;
      }
      // JSON null leaves a Go field at its zero value, which Kubernetes then omits.
      if (fieldValue === null) {
        if (this.options.normalize) delete object[key];
        continue;
      }
      this.path.push(key);
      const next = this.value(field, fieldValue, schema.name);
      if (next !== fieldValue) object[key] = next;
      this.path.pop();
    }
  }

  /** Go's decoder takes an integer field only from an integer literal within the Go type's range. */
  private integer(schema: Schema, value: unknown, owner: string | undefined, range: { min: number; max: number }): void {
    if (typeof value !== 'number') {
      this.mismatch(value, schema, owner);
      return;
    }
    const target = `${this.target(owner)} of type ${goTypeName(schema)}`;
    this.judgeNumber(value, (literal) => {
      const what = `json: cannot unmarshal number ${literal ?? value} into ${target}`;
      if (!Number.isInteger(value) || value < range.min || value > range.max || (literal !== undefined && !isIntegerLiteral(literal))) return what;
      return Number.isSafeInteger(value) ? undefined : `${what} (${INEXACT_INT64})`;
    });
  }

  /**
   * Judges a number now, or, when the body has a notable literal that became this value, once the literal
   * at this path is known (see finish).
   */
  private judgeNumber(value: number, judge: (literal: string | undefined) => string | undefined): void {
    if (this.options.numberLiterals?.mayHave(value)) {
      const path = this.path.map((segment) => (segment instanceof MapKey ? segment.key : segment));
      this.deferred.push({ path, value, field: this.jsonPath(), judge });
      return;
    }
    const message = judge(undefined);
    if (message) this.fail(message);
  }

  /** Judges the deferred numbers with the literals at their paths, found in one pass over the body. */
  finish(): void {
    if (this.deferred.length === 0) return;
    const literals = this.options.numberLiterals!.resolve(this.deferred);
    this.deferred.forEach(({ field, judge }, i) => {
      const message = judge(literals[i]);
      if (message) this.errors.push({ type: DECODE_CAUSE.typeMismatch, field, message });
    });
  }

  private quantity(value: unknown): unknown {
    if (typeof value === 'number' && Number.isFinite(value)) return this.options.normalize ? String(value) : value;
    if (typeof value !== 'string' || !isValidQuantity(value)) this.fail(QUANTITY_FORMAT_ERROR);
    return value;
  }

  private intOrString(value: unknown): void {
    if (typeof value === 'string') return;
    if (typeof value !== 'number') {
      this.fail(`json: cannot unmarshal ${jsonKind(value)} into Go value of type int32`);
      return;
    }
    this.judgeNumber(value, (literal) =>
      literal === undefined && Number.isInteger(value) && value >= INT32.min && value <= INT32.max
        ? undefined
        : `json: cannot unmarshal number ${literal ?? value} into Go value of type int32`,
    );
  }

  private time(value: unknown): void {
    if (typeof value !== 'string') {
      this.fail(`json: cannot unmarshal ${jsonKind(value)} into Go value of type string`);
      return;
    }
    const error = rfc3339Error(value);
    if (error) this.fail(error);
  }

  /** A value of the wrong JSON type, as Go's UnmarshalTypeError words it. */
  private mismatch(value: unknown, schema: Schema, owner: string | undefined): void {
    this.fail(`json: cannot unmarshal ${jsonKind(value)} into ${this.target(owner)} of type ${goTypeName(schema)}`);
  }

  /** What Go's UnmarshalTypeError names: the innermost struct and the struct fields leading to the value. */
  private target(owner: string | undefined): string {
    const structPath = this.path.filter((s): s is string => typeof s === 'string').join('.');
    return owner && structPath ? `Go struct field ${owner}.${structPath}` : 'Go value';
  }

  private fail(message: string): void {
    this.errors.push({ type: DECODE_CAUSE.typeMismatch, field: this.jsonPath(), message });
  }

  private unknownField(): void {
    const path = this.jsonPath();
    this.unknownFields.push(path);
    if (this.options.strict) {
      this.errors.push({ type: DECODE_CAUSE.unknownField, field: path, message: `unknown field "${path}"` });
    }
  }

  private jsonPath(): string {
    let out = '';
    for (const segment of this.path) {
      if (typeof segment === 'number') out += `[${segment}]`;
      else if (segment instanceof MapKey) out += `[${segment.key}]`;
      else out += out ? `.${segment}` : segment;
    }
    return out;
  }
}

/**
 * Type-checks a decoded JSON body against a schema, the way Kubernetes' JSON decoding does before
 * anything else looks at the object. Type errors come first, in document order; with `strict`,
 * unknown fields follow as errors too.
 */
export function decodeObject(schema: Schema, value: unknown, options: DecodeOptions = {}): DecodeResult {
  const decoder = new Decoder(options);
  decoder.value(schema, value, undefined);
  decoder.finish();
  const typeErrors = decoder.errors.filter((c) => c.type !== DECODE_CAUSE.unknownField);
  const strictErrors = decoder.errors.filter((c) => c.type === DECODE_CAUSE.unknownField);
  return { errors: [...typeErrors, ...strictErrors], unknownFields: decoder.unknownFields };
}

/**
 * The message of the 400 a failed decode answers with:
 * `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal …`, or with
 * strict field validation `…: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"`.
 */
export function decodeFailureMessage(kind: string, version: string, causes: StatusCause[]): string {
  const typeError = causes.find((c) => c.type !== DECODE_CAUSE.unknownField);
  const detail = typeError?.message ?? `strict decoding error: ${causes.map((c) => c.message).join(', ')}`;
  return `${kind} in version "${version}" cannot be handled as a ${kind}: ${detail}`;
}

/** The 400 BadRequest `ApiError` for a failed decode. */
export function decodeFailure(kind: string, version: string, causes: StatusCause[]): ApiError {
  return errors.badRequest(decodeFailureMessage(kind, version, causes), causes);
}
