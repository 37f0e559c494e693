import { describe, expect, it } from 'vitest';
import { compileSchema, type JSONSchemaProps } from './index.js';

/** Validates `spec` of a custom resource whose spec has `properties`; returns `field: message` lines. */
function check(properties: Record<string, JSONSchemaProps>, spec: Record<string, unknown>, extra: Partial<JSONSchemaProps> = {}): string[] {
  const schema: JSONSchemaProps = { type: 'object', properties: { spec: { type: 'object', properties, ...extra } } };
  const object = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec };
  return compileSchema(schema)
    .validate(object)
    .map((c) => `${c.field}: ${c.message}`);
}

describe('validate: OpenAPI keywords', () => {
  const cases: [string, Record<string, JSONSchemaProps>, Record<string, unknown>, string[]][] = [
    [
      'minimum',
      { size: { type: 'integer', minimum: 1 } },
      { size: 0 },
      ['spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1'],
    ],
    ['minimum met', { size: { type: 'integer', minimum: 1 } }, { size: 1 }, []],
    [
      'exclusiveMinimum',
      { size: { type: 'integer', minimum: 1, exclusiveMinimum: true } },
      { size: 1 },
      ['spec.size: Invalid value: 1: spec.size in body should be greater than 1'],
    ],
    [
      'maximum',
      { size: { type: 'integer', maximum: 10 } },
      { size: 11 },
      ['spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10'],
    ],
    [
      'exclusiveMaximum',
      { size: { type: 'number', maximum: 1.5, exclusiveMaximum: true } },
      { size: 1.5 },
      ['spec.size: Invalid value: 1.5: spec.size in body should be less than 1.5'],
    ],
    [
      'float bound printed as Go does',
      { ratio: { type: 'number', maximum: 1000000 } },
      { ratio: 2000000.5 },
      ['spec.ratio: Invalid value: 2.0000005e+06: spec.ratio in body should be less than or equal to 1e+06'],
    ],
    ['multipleOf', { n: { type: 'integer', multipleOf: 3 } }, { n: 7 }, ['spec.n: Invalid value: 7: spec.n in body should be a multiple of 3']],
    ['multipleOf met', { n: { type: 'integer', multipleOf: 3 } }, { n: 9 }, []],
    ['multipleOf float', { n: { type: 'number', multipleOf: 0.5 } }, { n: 0.75 }, ['spec.n: Invalid value: 0.75: spec.n in body should be a multiple of 0.5']],
    [
      'minLength',
      { name: { type: 'string', minLength: 3 } },
      { name: 'x' },
      ['spec.name: Invalid value: "x": spec.name in body should be at least 3 chars long'],
    ],
    ['maxLength', { name: { type: 'string', maxLength: 3 } }, { name: 'abcd' }, ['spec.name: Too long: may not be more than 3 bytes']],
    ['maxLength counts characters', { name: { type: 'string', maxLength: 3 } }, { name: 'äöü' }, []],
    [
      'pattern',
      { name: { type: 'string', pattern: '^[a-z]+$' } },
      { name: 'A1' },
      ['spec.name: Invalid value: "A1": spec.name in body should match \'^[a-z]+$\''],
    ],
    ['pattern (RE2 syntax)', { name: { type: 'string', pattern: '^\\p{Lu}\\w*$' } }, { name: 'Abc' }, []],
    ['enum', { mode: { type: 'string', enum: ['a', 'b'] } }, { mode: 'z' }, ['spec.mode: Unsupported value: "z": supported values: "a", "b"']],
    ['enum of numbers', { n: { type: 'integer', enum: [1, 2] } }, { n: 3 }, ['spec.n: Unsupported value: 3: supported values: "1", "2"']],
    ['enum met', { mode: { type: 'string', enum: ['a', 'b'] } }, { mode: 'b' }, []],
    [
      'type integer',
      { size: { type: 'integer' } },
      { size: 'string' },
      ['spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"'],
    ],
    [
      'type integer given a float',
      { size: { type: 'integer' } },
      { size: 1.5 },
      [
        'spec.size: Invalid value: "number": spec.size in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.size',
      ],
    ],
    ['type number takes integers', { ratio: { type: 'number' } }, { ratio: 2 }, []],
    ['type string', { name: { type: 'string' } }, { name: 5 }, ['spec.name: Invalid value: "integer": spec.name in body must be of type string: "integer"']],
    ['type boolean', { on: { type: 'boolean' } }, { on: 'yes' }, ['spec.on: Invalid value: "string": spec.on in body must be of type boolean: "string"']],
    [
      'type array',
      { list: { type: 'array', items: { type: 'string' } } },
      { list: {} },
      ['spec.list: Invalid value: "object": spec.list in body must be of type array: "object"'],
    ],
    ['type object', { obj: { type: 'object' } }, { obj: [] }, ['spec.obj: Invalid value: "array": spec.obj in body must be of type object: "array"']],
    ['required', { name: { type: 'string' } }, {}, []],
    [
      'minItems',
      { list: { type: 'array', items: { type: 'string' }, minItems: 1 } },
      { list: [] },
      ['spec.list: Invalid value: 0: spec.list in body should have at least 1 items'],
    ],
    [
      'maxItems',
      { list: { type: 'array', items: { type: 'string' }, maxItems: 1 } },
      { list: ['a', 'b'] },
      ['spec.list: Too many: 2: must have at most 1 item'],
    ],
    [
      'maxItems plural',
      { list: { type: 'array', items: { type: 'string' }, maxItems: 2 } },
      { list: ['a', 'b', 'c'] },
      ['spec.list: Too many: 3: must have at most 2 items'],
    ],
    [
      'uniqueItems',
      { list: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
      { list: ['a', 'a'] },
      ['spec.list: Invalid value: "": spec.list in body shouldn\'t contain duplicates'],
    ],
    [
      'items',
      { list: { type: 'array', items: { type: 'integer', minimum: 0 } } },
      { list: [1, -1] },
      ['spec.list[1]: Invalid value: -1: spec.list[1] in body should be greater than or equal to 0'],
    ],
    [
      'minProperties',
      { labels: { type: 'object', additionalProperties: { type: 'string' }, minProperties: 1 } },
      { labels: {} },
      ['spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties'],
    ],
    [
      'maxProperties',
      { labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 } },
      { labels: { a: 'x', b: 'y' } },
      ['spec.labels: Too many: 2: must have at most 1 item'],
    ],
    [
      'additionalProperties schema',
      { labels: { type: 'object', additionalProperties: { type: 'string' } } },
      { labels: { a: 1 } },
      ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'],
    ],
    [
      'int32 range',
      { port: { type: 'integer', format: 'int32' } },
      { port: 2 ** 31 },
      ['<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.port'],
    ],
    ['int64', { big: { type: 'integer', format: 'int64' } }, { big: 2 ** 40 }, []],
  ];
  it.each(cases)('%s', (_name, properties, spec, expected) => {
    expect(check(properties, spec)).toEqual(expected);
  });

  it('reports required fields by their path', () => {
    expect(check({ name: { type: 'string' } }, {}, { required: ['name'] })).toEqual(['spec.name: Required value']);
    const root = compileSchema({ type: 'object', required: ['spec'], properties: { spec: { type: 'object' } } });
    expect(root.validate({ apiVersion: 'v', kind: 'K', metadata: {} }).map((c) => `${c.field}: ${c.message}`)).toEqual(['spec: Required value']);
  });

  it('fails every value against a pattern that is not RE2 instead of throwing', () => {
    expect(check({ name: { type: 'string', pattern: '(a' } }, { name: 'a' })).toEqual([
      'spec.name: Invalid value: "a": spec.name in body should match \'(a, but pattern is invalid: error parsing regexp: missing closing ): `(a`\'',
    ]);
  });

  it('gives each cause a Kubernetes cause type', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      required: ['spec'],
      properties: { spec: { type: 'object', properties: { a: { type: 'string', maxLength: 1 }, b: { type: 'integer' }, c: { type: 'string', enum: ['x'] } } } },
    };
    const causes = compileSchema(schema).validate({ spec: { a: 'ab', b: 'x', c: 'y' } });
    expect(causes.map((c) => c.type)).toEqual(['FieldValueTooLong', 'FieldValueTypeInvalid', 'FieldValueNotSupported']);
  });
});

describe('validate: allOf, anyOf, oneOf, not', () => {
  it('anyOf needs one alternative to pass', () => {
    const properties: Record<string, JSONSchemaProps> = { n: { type: 'integer', anyOf: [{ minimum: 10 }, { maximum: 0 }] } };
    expect(check(properties, { n: 11 })).toEqual([]);
    expect(check(properties, { n: 5 })).toEqual([
      '<nil>: Invalid value: "": "spec.n" must validate at least one schema (anyOf)',
      'spec.n: Invalid value: 5: spec.n in body should be greater than or equal to 10',
    ]);
  });
  it('oneOf needs exactly one alternative to pass', () => {
    const properties: Record<string, JSONSchemaProps> = { n: { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] } };
    expect(check(properties, { n: -5 })).toEqual([]);
    expect(check(properties, { n: 5 })).toEqual([
      '<nil>: Invalid value: "": "spec.n" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    ]);
  });
  it('allOf needs every part to pass', () => {
    const properties: Record<string, JSONSchemaProps> = { s: { type: 'string', allOf: [{ minLength: 2 }, { pattern: '^a' }] } };
    expect(check(properties, { s: 'ab' })).toEqual([]);
    expect(check(properties, { s: 'b' })).toEqual([
      'spec.s: Invalid value: "b": spec.s in body should be at least 2 chars long',
      'spec.s: Invalid value: "b": spec.s in body should match \'^a\'',
      '<nil>: Invalid value: "": "spec.s" must validate all the schemas (allOf). None validated',
    ]);
  });
  it('not must fail', () => {
    const properties: Record<string, JSONSchemaProps> = { s: { type: 'string', not: { enum: ['forbidden'] } } };
    expect(check(properties, { s: 'ok' })).toEqual([]);
    expect(check(properties, { s: 'forbidden' })).toEqual(['<nil>: Invalid value: "": "spec.s" must not validate the schema (not)']);
  });
});

describe('validate: int-or-string and nullable', () => {
  const intOrString: JSONSchemaProps = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
  it.each([
    [{ port: 8080 }, []],
    [{ port: 'http' }, []],
    [
      { port: 1.5 },
      [
        'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
        '<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
        'spec.port: Invalid value: "number": spec.port in body must be of type string: "number"',
      ],
    ],
    [
      { port: true },
      [
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
      ],
    ],
  ])('int-or-string %j', (spec, expected) => {
    expect(check({ port: intOrString }, spec)).toEqual(expected);
  });

  it('null for a field that is not nullable is a type error', () => {
    expect(check({ name: { type: 'string' } }, { name: null })).toEqual(['spec.name: Invalid value: "null": spec.name in body must be of type string: "null"']);
  });
  it('null for a nullable field is fine', () => {
    expect(check({ name: { type: 'string', nullable: true } }, { name: null })).toEqual([]);
  });
});

describe('validate: formats', () => {
  const cases: [string, string, string][] = [
    ['email', 'someone@example.com', 'x'],
    ['hostname', 'www.example.com', '-bad-.com'],
    ['ipv4', '10.0.0.1', '300.1.1.1'],
    ['ipv6', '2001:db8::1', '10.0.0.1'],
    ['cidr', '10.0.0.0/8', '10.0.0.0/33'],
    ['mac', '00:1a:2b:3c:4d:5e', '00:1a:2b'],
    ['uri', 'https://example.com/path?q=1', 'not a uri'],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', '123e4567'],
    ['uuid3', 'a3bb189e-8bf9-3888-9912-ace4e6543002', '123e4567-e89b-42d3-a456-426614174000'],
    ['uuid4', '123e4567-e89b-42d3-a456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
    ['uuid5', '123e4567-e89b-52d3-a456-426614174000', '123e4567-e89b-52d3-1456-426614174000'],
    ['byte', 'aGVsbG8=', 'not base64!'],
    ['date', '2024-02-29', '2023-02-29'],
    ['date-time', '2024-01-02T03:04:05Z', '2024-01-02 03:04'],
    ['datetime', '2024-01-02T03:04:05.123+02:00', '2024-01-02T25:04:05Z'],
    ['duration', '1h30m', 'soon'],
    ['duration', '3 days', '1x'],
    ['isbn10', '0321751043', '0321751044'],
    ['isbn13', '978-0321751041', '978-0321751042'],
    ['isbn', '0321751043', '12345'],
    ['creditcard', '4111 1111 1111 1111', '4111 1111 1111 1112'],
    ['ssn', '123-45-6789', '123456789'],
    ['hexcolor', '#ffAA00', '#ggg'],
    ['rgbcolor', 'rgb(255, 0, 10)', 'rgb(256,0,0)'],
    ['bsonobjectid', '507f1f77bcf86cd799439011', '507f1f77'],
    ['k8s-short-name', 'my-name', 'My.Name'],
    ['k8s-long-name', 'my.name', 'my..name'],
  ];
  it.each(cases)('%s accepts %j and rejects %j', (format, good, bad) => {
    const properties = { v: { type: 'string', format } };
    expect(check(properties, { v: good })).toEqual([]);
    expect(check(properties, { v: bad })).toEqual([
      `spec.v: Invalid value: ${JSON.stringify(bad)}: spec.v in body must be of type ${format}: ${JSON.stringify(bad)}`,
    ]);
  });

  it('password accepts anything; unknown formats are ignored', () => {
    expect(check({ v: { type: 'string', format: 'password' } }, { v: '' })).toEqual([]);
    expect(check({ v: { type: 'string', format: 'no-such-format' } }, { v: 'x' })).toEqual([]);
  });

  it.each([
    ['int32', 'integer', 2 ** 31 - 1, 2 ** 31],
    ['int64', 'integer', 2 ** 53, 1.5],
    ['float', 'number', 1.5, 1e39],
    ['double', 'number', 1e300, 'x'],
  ])('numeric format %s', (format, type, good, bad) => {
    const properties = { v: { type, format } };
    expect(check(properties, { v: good })).toEqual([]);
    expect(check(properties, { v: bad }).length).toBeGreaterThan(0);
  });

  it('a format on a non-string value is a type error naming the format', () => {
    expect(check({ v: { type: 'string', format: 'date' } }, { v: 5 })).toEqual([
      'spec.v: Invalid value: "int64": spec.v in body must be of type date: "int64"',
    ]);
  });
});
