import { describe, expect, it } from 'vitest';
import { checkSchema, type JSONSchemaProps } from './index.js';

const ROOT = 'spec.versions[0].schema.openAPIV3Schema';
const withSpec = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec } });
const problems = (schema: JSONSchemaProps) => checkSchema(schema, ROOT).map((c) => `${c.field}: ${c.message}`);

describe('checkSchema accepts', () => {
  it.each<[string, JSONSchemaProps]>([
    [
      'a typical schema',
      withSpec({ type: 'object', required: ['size'], properties: { size: { type: 'integer', minimum: 1, default: 1 }, name: { type: 'string' } } }),
    ],
    [
      'int-or-string with its anyOf',
      withSpec({ type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }),
    ],
    ['preserve-unknown-fields without a type', withSpec({ type: 'object', properties: { free: { 'x-kubernetes-preserve-unknown-fields': true } } })],
    [
      'an embedded resource',
      withSpec({
        type: 'object',
        properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
      }),
    ],
    [
      'metadata restricting the name',
      { type: 'object', properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } } } },
    ],
    [
      'value validations naming specified fields',
      withSpec({
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        oneOf: [{ required: ['a'] }, { required: ['b'] }],
        anyOf: [{ properties: { a: { minLength: 1 } } }],
      }),
    ],
    [
      'a list-type map with required keys',
      withSpec({
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          },
        },
      }),
    ],
    [
      'CEL rules that compile',
      withSpec({
        type: 'object',
        properties: { a: { type: 'integer' } },
        'x-kubernetes-validations': [{ rule: 'self.a > 0' }, { rule: 'self.a == oldSelf.a' }],
      }),
    ],
  ])('%s', (_name, schema) => {
    expect(problems(schema)).toEqual([]);
  });
});

describe('checkSchema rejects', () => {
  it.each<[string, JSONSchemaProps, string[]]>([
    [
      'a field without a type',
      withSpec({ type: 'object', properties: { a: {} } }),
      [`${ROOT}.properties[spec].properties[a].type: Required value: must not be empty for specified object fields`],
    ],
    ['a root without a type', { properties: {} }, [`${ROOT}.type: Required value: must not be empty at the root`]],
    ['a root that is not an object', { type: 'string' }, [`${ROOT}.type: Invalid value: "string": must be object at the root`]],
    [
      'array items without a type',
      withSpec({ type: 'array', items: {} }),
      [`${ROOT}.properties[spec].items.type: Required value: must not be empty for specified array items`],
    ],
    ['an array without items', withSpec({ type: 'array' }), [`${ROOT}.properties[spec].items: Required value: must be specified`]],
    [
      'properties beside additionalProperties',
      withSpec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }),
      [`${ROOT}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
    ],
    [
      'additionalProperties at the root',
      { type: 'object', additionalProperties: { type: 'string' } },
      [`${ROOT}.additionalProperties: Forbidden: must not be used at the root`],
    ],
    [
      'a type inside a value validation',
      withSpec({ type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ type: 'object' }] }),
      [`${ROOT}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`],
    ],
    [
      'a value validation naming an unspecified field',
      { type: 'object', properties: { a: { type: 'string' } }, allOf: [{ properties: { b: { minLength: 1 } } }] },
      [`${ROOT}.properties[b]: Required value: because it is defined in ${ROOT}.allOf[0].properties[b]`],
    ],
    ['nullable at the root', { type: 'object', nullable: true }, [`${ROOT}.nullable: Forbidden: nullable cannot be true at the root`]],
    [
      'metadata beyond name and generateName',
      { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } },
      [`${ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`],
    ],
    [
      'uniqueItems',
      withSpec({ type: 'array', items: { type: 'string' }, uniqueItems: true }),
      [`${ROOT}.properties[spec].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`],
    ],
    [
      'an unknown type',
      withSpec({ type: 'map' }),
      [`${ROOT}.properties[spec].type: Unsupported value: "map": supported values: "array", "boolean", "integer", "number", "object", "string"`],
    ],
    ['$ref', withSpec({ type: 'object', $ref: '#/x' }), [`${ROOT}.properties[spec].$ref: Forbidden: $ref is not supported`]],
    [
      'an invalid pattern',
      withSpec({ type: 'string', pattern: '(a' }),
      [`${ROOT}.properties[spec].pattern: Invalid value: "(a": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): \`(a\``],
    ],
    [
      'a default that does not validate',
      withSpec({ type: 'object', properties: { size: { type: 'integer', minimum: 1, default: 0 } } }),
      [`${ROOT}.properties[spec].properties[size].default: Invalid value: 0:  in body should be greater than or equal to 1`],
    ],
    [
      'a default with unknown fields',
      withSpec({ type: 'object', default: { x: 1 }, properties: { a: { type: 'string' } } }),
      [`${ROOT}.properties[spec].default: Invalid value: {"x":1}: must not have unknown fields`],
    ],
    [
      'a default in top-level metadata',
      { type: 'object', properties: { metadata: { type: 'object', default: {} } } },
      [`${ROOT}.properties[metadata].default: Forbidden: must not be set in top-level metadata`],
    ],
    [
      'int-or-string with preserve-unknown-fields',
      withSpec({ 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true }),
      [`${ROOT}.properties[spec].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`],
    ],
    [
      'an embedded resource that is not an object',
      withSpec({ type: 'string', 'x-kubernetes-embedded-resource': true }),
      [
        `${ROOT}.properties[spec].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
        `${ROOT}.properties[spec].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
      ],
    ],
    [
      'a list type on a non-array',
      withSpec({ type: 'object', 'x-kubernetes-list-type': 'set' }),
      [`${ROOT}.properties[spec].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`],
    ],
    [
      'a list-type map without keys',
      withSpec({ type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object', properties: { name: { type: 'string' } } } }),
      [`${ROOT}.properties[spec].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`],
    ],
    [
      'a list map key that is not a property',
      withSpec({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['id'],
        items: { type: 'object', properties: { name: { type: 'string' } } },
      }),
      [`${ROOT}.properties[spec].x-kubernetes-list-map-keys: Invalid value: ["id"]: entries must all be names of item properties`],
    ],
    [
      'a list map key that is neither required nor defaulted',
      withSpec({
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' } } },
      }),
      [
        `${ROOT}.properties[spec].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
      ],
    ],
    [
      'an unknown list type',
      withSpec({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' }),
      [`${ROOT}.properties[spec].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`],
    ],
  ])('%s', (_name, schema, expected) => {
    expect(problems(schema)).toEqual(expected);
  });
});

describe('checkSchema and CEL rules', () => {
  const rules = (rule: Record<string, unknown>, extra: JSONSchemaProps = {}) =>
    problems(
      withSpec({
        type: 'object',
        properties: { a: { type: 'integer' }, list: { type: 'array', items: { type: 'string', ...extra } } },
        'x-kubernetes-validations': [rule as never],
      }),
    );
  const rulePath = `${ROOT}.properties[spec].x-kubernetes-validations[0]`;

  it('reports a rule that does not compile (the rule printed as Go marshals it, HTML characters escaped)', () => {
    expect(rules({ rule: 'self.b > 0' })).toEqual([
      `${rulePath}.rule: Invalid value: {"rule":"self.b \\u003e 0"}: compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b > 0\n | ....^`,
    ]);
  });

  it('reports a syntax error', () => {
    const [problem] = rules({ rule: 'self.a >' });
    expect(problem).toMatch(
      /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: \{"rule":"self.a \\u003e"\}: compilation failed: ERROR: <input>:1:/,
    );
  });

  it('reports an unknown function and a result that is not a bool', () => {
    expect(rules({ rule: 'self.a.frobnicate()' })[0]).toContain("undeclared reference to 'frobnicate'");
    expect(rules({ rule: 'self.a + 1' })).toEqual([`${rulePath}.rule: Invalid value: {"rule":"self.a + 1"}: cel expression must evaluate to a bool`]);
  });

  it('checks message, reason and fieldPath', () => {
    expect(rules({ rule: 'self.a > 0', message: ' ' })).toEqual([`${rulePath}.message: Invalid value: " ": must be non-empty if specified`]);
    expect(rules({ rule: '' })).toEqual([`${rulePath}.rule: Required value: rule is not specified`]);
    expect(rules({ rule: 'self.a > 0', reason: 'Nope' })).toEqual([
      `${rulePath}.reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    ]);
    expect(rules({ rule: 'self.a > 0', fieldPath: '.nope' })).toEqual([`${rulePath}.fieldPath: Invalid value: ".nope": must be a valid path`]);
    expect(rules({ rule: 'self.a > 0', fieldPath: '.a' })).toEqual([]);
  });

  it('refuses a rule nested deeper than cel-go allows, where checking it would overflow the stack', () => {
    const [problem] = rules({ rule: `self.a${' + 1'.repeat(20_000)} > 0` });
    expect(problem).toMatch(/^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: /);
    expect(problem).toMatch(/: compilation failed: ERROR: <input>: expression recursion limit exceeded: 250$/);
  });

  it('refuses optionalOldSelf on a rule without oldSelf', () => {
    expect(rules({ rule: 'self.a > 0', optionalOldSelf: true })).toEqual([
      `${rulePath}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`,
    ]);
  });

  it('refuses oldSelf below a list that cannot correlate items', () => {
    const schema = withSpec({
      type: 'object',
      properties: {
        list: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } },
      },
    });
    expect(problems(schema)).toEqual([
      `${ROOT}.properties[spec].properties[list].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${ROOT}.properties[spec].properties[list]`,
    ]);
  });

  it('refuses rules inside value validations', () => {
    const schema = withSpec({ type: 'object', properties: { a: { type: 'integer' } }, allOf: [{ 'x-kubernetes-validations': [{ rule: 'true' }] }] });
    expect(problems(schema)).toEqual([`${ROOT}.properties[spec].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`]);
  });

  it('validates defaults against CEL rules', () => {
    const schema = withSpec({
      type: 'object',
      default: { a: 0 },
      properties: { a: { type: 'integer' } },
      'x-kubernetes-validations': [{ rule: 'self.a > 0' }],
    });
    expect(problems(schema)).toEqual([`${ROOT}.properties[spec].default: Invalid value: failed rule: self.a > 0`]);
  });
});
