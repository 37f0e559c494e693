// The OpenAPI keywords of a schema checked against a value, with kube-openapi's order and messages
// (`spec.size in body should be greater than or equal to 1`) turned into field errors the way the
// apiextensions API server turns them (`spec.size: Invalid value: 0: …`).
import type { StatusCause } from '@skiff/api';
import { goFloat, goJSON, invalid, paths, required, tooLong, tooMany, typeInvalid, notSupported } from './causes.js';
import { isPlainObject, jsonEqual, type SchemaNode } from './node.js';

const INT32 = 2 ** 31;
const INT64 = 2 ** 63;
const FLOAT32_MAX = 3.4028234663852886e38;

const quote = (s: string) => JSON.stringify(s);
/** `%v` of an int64 (JSON integers) or a float64 (the rest). */
const printNumber = (n: number, asInt: boolean) => (asInt ? String(Math.trunc(n)) : goFloat(n));

class OpenAPIValidator {
  /** `base` is the field path the value sits at (undefined: a custom resource's root, Go's nil path). */
  constructor(private readonly base: string | undefined) {}

  /** The field of an error about `name` (kube-openapi's dotted path of the value). */
  private field(name: string): string {
    if (name === '' || name === '.') return paths.field(this.base);
    return paths.child(this.base, name.startsWith('.') ? name.slice(1) : name);
  }

  /** An error that is not a kube-openapi validation error: reported on the base path with an empty value. */
  private plain(out: StatusCause[], message: string): void {
    out.push(invalid(paths.field(this.base), '', message));
  }

  validate(node: SchemaNode, data: unknown, name: string, out: StatusCause[]): void {
    if (data === null || data === undefined) {
      this.checkType(node, null, name, out);
      this.checkEnum(node, null, name, out);
      return;
    }
    this.checkType(node, data, name, out);
    this.checkComposition(node, data, name, out);
    if (typeof data === 'string') {
      this.checkString(node, data, name, out);
      if (node.formatCheck && !node.formatCheck(data)) {
        out.push(typeInvalid(this.field(name), data, `${name} in body must be of type ${node.format}: ${quote(data)}`));
      }
    } else if (typeof data === 'number') {
      this.checkNumber(node, data, name, out);
    } else if (Array.isArray(data)) {
      this.checkArray(node, data, name, out);
    }
    this.checkEnum(node, data, name, out);
    if (isPlainObject(data)) this.checkObject(node, data, name, out);
  }

  private typeError(out: StatusCause[], name: string, expected: string, actual: string): void {
    out.push(typeInvalid(this.field(name), actual, `${name} in body must be of type ${expected}: ${quote(actual)}`));
  }

  private checkType(node: SchemaNode, data: unknown, name: string, out: StatusCause[]): void {
    const { types, format } = node;
    if (types.length === 0 && !format) return;
    if (data === null) {
      if (types.length > 0 && !node.nullable) this.typeError(out, name, types.join(','), 'null');
      return;
    }
    let actual: string;
    let actualFormat = '';
    if (typeof data === 'boolean') actual = 'boolean';
    else if (typeof data === 'string') actual = 'string';
    else if (typeof data === 'number') [actual, actualFormat] = Number.isInteger(data) ? ['integer', 'int64'] : ['number', 'double'];
    else actual = Array.isArray(data) ? 'array' : 'object';
    const intAsNumber = actual === 'integer' && types.includes('number');
    const textual = actual === 'string' || actual === 'array';
    if (!textual && format && !(types.includes(actual) || actualFormat === format || intAsNumber)) {
      this.typeError(out, name, format, actualFormat);
      return;
    }
    if (!types.includes('number') && !types.includes('integer') && format && textual) return;
    if (!(types.includes(actual) || intAsNumber)) this.typeError(out, name, types.join(','), actual);
  }

  private checkComposition(node: SchemaNode, data: unknown, name: string, out: StatusCause[]): void {
    if (node.anyOf.length > 0) {
      let best: StatusCause[] | undefined;
      let matched = false;
      for (const alternative of node.anyOf) {
        const errs: StatusCause[] = [];
        this.validate(alternative, data, name, errs);
        if (errs.length === 0) {
          matched = true;
          break;
        }
        if (!best || errs.length < best.length) best = errs;
      }
      if (!matched) {
        this.plain(out, `${quote(name)} must validate at least one schema (anyOf)`);
        out.push(...best!);
      }
    }
    if (node.oneOf.length > 0) {
      let best: StatusCause[] | undefined;
      let valid = 0;
      for (const alternative of node.oneOf) {
        const errs: StatusCause[] = [];
        this.validate(alternative, data, name, errs);
        if (errs.length === 0) valid++;
        else if (valid === 0 && (!best || errs.length < best.length)) best = errs;
      }
      if (valid !== 1) {
        const found = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
        this.plain(out, `${quote(name)} must validate one and only one schema (oneOf). ${found}`);
        if (valid === 0 && best) out.push(...best);
      }
    }
    if (node.allOf.length > 0) {
      let valid = 0;
      for (const part of node.allOf) {
        const errs: StatusCause[] = [];
        this.validate(part, data, name, errs);
        if (errs.length === 0) valid++;
        out.push(...errs);
      }
      if (valid !== node.allOf.length) {
        this.plain(out, `${quote(name)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`);
      }
    }
    if (node.not) {
      const errs: StatusCause[] = [];
      this.validate(node.not, data, name, errs);
      if (errs.length === 0) this.plain(out, `${quote(name)} must not validate the schema (not)`);
    }
  }

  private checkString(node: SchemaNode, data: string, name: string, out: StatusCause[]): void {
    const { maxLength, minLength } = node.props;
    if (maxLength !== undefined || minLength !== undefined) {
      const length = [...data].length;
      if (maxLength !== undefined && length > maxLength) {
        out.push(tooLong(this.field(name), maxLength));
        return;
      }
      if (minLength !== undefined && length < minLength) {
        out.push(invalid(this.field(name), data, `${name} in body should be at least ${minLength} chars long`));
        return;
      }
    }
    if (node.pattern?.error) {
      out.push(invalid(this.field(name), data, `${name} in body should match '${node.props.pattern}, but pattern is invalid: ${node.pattern.error}'`));
    } else if (node.pattern && !node.pattern.test(data)) {
      out.push(invalid(this.field(name), data, `${name} in body should match '${node.props.pattern}'`));
    }
  }

  private checkNumber(node: SchemaNode, data: number, name: string, out: StatusCause[]): void {
    const { multipleOf, minimum, maximum, exclusiveMinimum, exclusiveMaximum } = node.props;
    const isInt = Number.isInteger(data) && Math.abs(data) < INT64;
    const typeName = node.types.length === 1 ? node.types[0]! : '';
    const format = node.format;
    let outOfRange = false;
    if (typeName === 'integer') outOfRange = !isInt || (format === 'int32' && (data < -INT32 || data >= INT32));
    else if (format === 'float') outOfRange = Math.abs(data) > FLOAT32_MAX;
    if (outOfRange) {
      const kind = typeName || 'number';
      this.plain(
        out,
        format ? `Checked value must be of type ${kind} with format ${format} in ${name}` : `Checked value must be of type ${kind} (default format) in ${name}`,
      );
    }
    if (multipleOf !== undefined) {
      const intPath = isInt && Number.isInteger(multipleOf);
      if (multipleOf <= 0) {
        out.push(invalid(this.field(name), multipleOf, `factor MultipleOf declared for ${name} must be positive: ${printNumber(multipleOf, intPath)}`));
      } else {
        const quotient = intPath ? data % multipleOf : multipleOf < 1 ? (1 / multipleOf) * data : data / multipleOf;
        if (intPath ? quotient !== 0 : !Number.isInteger(quotient)) {
          out.push(invalid(this.field(name), data, `${name} in body should be a multiple of ${printNumber(multipleOf, intPath)}`));
        }
      }
    }
    if (minimum !== undefined) {
      const bound = isInt ? Math.trunc(minimum) : minimum;
      const below = exclusiveMinimum ? data <= bound : data < bound;
      if (below) {
        const relation = exclusiveMinimum ? 'greater than' : 'greater than or equal to';
        out.push(invalid(this.field(name), data, `${name} in body should be ${relation} ${printNumber(minimum, isInt)}`));
      }
    }
    if (maximum !== undefined) {
      const bound = isInt ? Math.trunc(maximum) : maximum;
      const above = exclusiveMaximum ? data >= bound : data > bound;
      if (above) {
        const relation = exclusiveMaximum ? 'less than' : 'less than or equal to';
        out.push(invalid(this.field(name), data, `${name} in body should be ${relation} ${printNumber(maximum, isInt)}`));
      }
    }
  }

  private checkArray(node: SchemaNode, data: unknown[], name: string, out: StatusCause[]): void {
    if (node.items) {
      for (let i = 0; i < data.length; i++) this.validate(node.items, data[i], `${name}[${i}]`, out);
    }
    const { minItems, maxItems, uniqueItems } = node.props;
    if (minItems !== undefined && data.length < minItems) {
      out.push(invalid(this.field(name), data.length, `${name} in body should have at least ${minItems} items`));
    }
    if (maxItems !== undefined && data.length > maxItems) out.push(tooMany(this.field(name), data.length, maxItems));
    if (uniqueItems && data.some((x, i) => data.slice(0, i).some((y) => jsonEqual(x, y)))) {
      out.push(invalid(this.field(name), '', `${name} in body shouldn't contain duplicates`));
    }
  }

  private checkEnum(node: SchemaNode, data: unknown, name: string, out: StatusCause[]): void {
    const values = node.props.enum;
    if (!values || values.length === 0 || values.some((v) => jsonEqual(v, data))) return;
    out.push(
      notSupported(
        this.field(name),
        data,
        values.map((v) => (typeof v === 'string' ? v : goJSON(v))),
      ),
    );
  }

  private checkObject(node: SchemaNode, data: Record<string, unknown>, name: string, out: StatusCause[]): void {
    const { minProperties, maxProperties } = node.props;
    const keys = Object.keys(data);
    if (minProperties !== undefined && keys.length < minProperties) {
      out.push(invalid(this.field(name), keys.length, `${name} in body should have at least ${minProperties} properties`));
    }
    if (maxProperties !== undefined && keys.length > maxProperties) out.push(tooMany(this.field(name), keys.length, maxProperties));
    if (node.additional === false) {
      for (const key of keys) {
        if (!node.properties?.has(key)) out.push(invalid(this.field(name), key, `${name}.${key} in body is a forbidden property`));
      }
    } else if (typeof node.additional === 'object') {
      for (const key of keys) {
        if (!node.properties?.has(key)) this.validate(node.additional, data[key], `${name}.${key}`, out);
      }
    }
    if (node.properties) {
      for (const [property, sub] of node.properties) {
        if (property in data) this.validate(sub, data[property], name ? `${name}.${property}` : property, out);
      }
    }
    for (const key of node.props.required ?? []) {
      if (!(key in data)) out.push(required(this.field(`${name}.${key}`)));
    }
  }
}

/**
 * Validates `value` against `node`'s OpenAPI keywords. `base` is the field path of the value (undefined
 * for a custom resource's root, whose errors are then named by their own path, `spec.size`).
 */
export function validateOpenAPI(node: SchemaNode, value: unknown, base?: string): StatusCause[] {
  const out: StatusCause[] = [];
  new OpenAPIValidator(base).validate(node, value, '', out);
  return out;
}
