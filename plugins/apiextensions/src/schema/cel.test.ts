import { describe, expect, it } from 'vitest';
import type { ValidationRule } from '@skiff/api';
import { compileSchema, type JSONSchemaProps } from './index.js';

const specSchema = (rules: ValidationRule[], properties?: Record<string, JSONSchemaProps>): JSONSchemaProps => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      'x-kubernetes-validations': rules,
      properties: properties ?? {
        replicas: { type: 'integer' },
        min: { type: 'integer' },
        max: { type: 'integer' },
        ratio: { type: 'number' },
        name: { type: 'string' },
        mode: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        numbers: { type: 'array', items: { type: 'integer' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        port: { 'x-kubernetes-int-or-string': true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
});

const messages = (schema: JSONSchemaProps, spec: unknown, oldSpec?: unknown) =>
  compileSchema(schema)
    .validate({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec }, oldSpec === undefined ? undefined : { spec: oldSpec })
    .map((c) => `${c.field}: ${c.message}`);

describe('CEL rules', () => {
  const spec = {
    replicas: 3,
    min: 1,
    max: 5,
    ratio: 0.5,
    name: 'Hello-World',
    mode: 'a',
    tags: ['x', 'y'],
    numbers: [1, 2, 3],
    labels: { app: 'web' },
    port: 8080,
    extra: { count: 2, nested: { ok: true } },
  };
  it.each([
    'self.min <= self.max',
    'self.replicas == 3 && self.ratio < 1.0',
    'has(self.name) && !has(self.labels.other)',
    'size(self.tags) == 2 && self.tags.size() == 2',
    "self.tags.all(t, t.size() == 1) && self.tags.exists(t, t == 'x') && self.tags.exists_one(t, t == 'y')",
    'self.numbers.map(n, n * 2) == [2, 4, 6] && self.numbers.filter(n, n > 1).size() == 2',
    "self.name.matches('^[A-Z]') && self.name.startsWith('Hello') && self.name.endsWith('World') && self.name.contains('-')",
    "self.name.lowerAscii() == 'hello-world' && self.name.upperAscii() == 'HELLO-WORLD'",
    'self.numbers.isSorted() && self.numbers.sum() == 6 && self.numbers.min() == 1 && self.numbers.max() == 3',
    "self.tags.indexOf('y') == 1 && self.numbers.lastIndexOf(3) == 2",
    "self.labels['app'] == 'web' && 'app' in self.labels && self.labels.all(k, k == 'app')",
    "self.name.split('-').size() == 2 && ['a', 'b'].join(',') == 'a,b' && self.name.substring(0, 5) == 'Hello'",
    'self.port == 8080',
    'self.extra.count == 2 && self.extra.nested.ok',
    "self.mode in ['a', 'b'] ? true : false",
  ])('%s holds', (rule) => {
    expect(messages(specSchema([{ rule }]), spec)).toEqual([]);
  });

  it('a failing rule reports its message, or the rule itself', () => {
    const schema = specSchema([{ rule: 'self.min <= self.max', message: 'min must not exceed max' }, { rule: 'self.replicas > 5' }]);
    expect(messages(schema, { min: 9, max: 1, replicas: 1 })).toEqual([
      'spec: Invalid value: min must not exceed max',
      'spec: Invalid value: failed rule: self.replicas > 5',
    ]);
  });

  it('a rule on a scalar prints the value', () => {
    const schema = specSchema([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() > 3' }] } });
    expect(messages(schema, { name: 'ab' })).toEqual(['spec.name: Invalid value: "ab": failed rule: self.size() > 3']);
  });

  it('a rule at the root reports on the nil path', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('x')" }],
      properties: { spec: { type: 'object' } },
    };
    expect(messages(schema, {})).toEqual(["<nil>: Invalid value: failed rule: self.metadata.name.startsWith('x')"]);
  });

  it('messageExpression builds the message from the value', () => {
    const schema = specSchema([{ rule: 'self.replicas < 10', messageExpression: "'replicas is ' + string(self.replicas) + ', too many'" }]);
    expect(messages(schema, { replicas: 12 })).toEqual(['spec: Invalid value: replicas is 12, too many']);
  });

  it('reason and fieldPath choose the cause type and field', () => {
    const schema = specSchema([
      { rule: 'has(self.name)', reason: 'FieldValueRequired', fieldPath: '.name', message: 'name is required' },
      { rule: "self.mode != 'z'", reason: 'FieldValueForbidden', fieldPath: '.mode', message: 'z is not allowed' },
    ]);
    const causes = compileSchema(schema).validate({ spec: { mode: 'z' } });
    expect(causes).toEqual([
      { type: 'FieldValueRequired', field: 'spec.name', message: 'Required value: name is required' },
      { type: 'FieldValueForbidden', field: 'spec.mode', message: 'Forbidden: z is not allowed' },
    ]);
  });

  it('runs rules on every item and map value, with paths naming them', () => {
    const schema = specSchema([], {
      items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.n > 0' }] } },
      byKey: { type: 'object', additionalProperties: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self < 10' }] } },
    });
    expect(messages(schema, { items: [{ n: 1 }, { n: 0 }], byKey: { a: 1, b: 20 } })).toEqual([
      'spec.items[1]: Invalid value: failed rule: self.n > 0',
      'spec.byKey[b]: Invalid value: 20: failed rule: self < 10',
    ]);
  });

  it('a runtime error is reported with the rule', () => {
    const schema = specSchema([{ rule: 'self.labels.missing == "x"' }]);
    expect(messages(schema, { labels: {} })).toEqual(['spec: Invalid value: "object": no such key: missing evaluating rule: self.labels.missing == "x"']);
  });

  it('skips rules on null values', () => {
    const schema = specSchema([], { name: { type: 'string', nullable: true, 'x-kubernetes-validations': [{ rule: 'self.size() > 3' }] } });
    expect(messages(schema, { name: null })).toEqual([]);
  });
});

describe('CEL transition rules', () => {
  const immutable = specSchema([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] } });

  it('are skipped on create', () => {
    expect(messages(immutable, { name: 'a' })).toEqual([]);
  });

  it('compare with the stored value on update', () => {
    expect(messages(immutable, { name: 'a' }, { name: 'a' })).toEqual([]);
    expect(messages(immutable, { name: 'b' }, { name: 'a' })).toEqual(['spec.name: Invalid value: "b": name is immutable']);
  });

  it('are skipped when the field is new in the update', () => {
    expect(messages(immutable, { name: 'b' }, {})).toEqual([]);
  });

  it('correlate items of list-type=map lists by key', () => {
    const schema = specSchema([], {
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, port: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.port >= oldSelf.port', message: 'port may only grow' }],
        },
      },
    });
    const old = {
      ports: [
        { name: 'a', port: 10 },
        { name: 'b', port: 10 },
      ],
    };
    expect(
      messages(
        schema,
        {
          ports: [
            { name: 'b', port: 5 },
            { name: 'a', port: 11 },
            { name: 'c', port: 1 },
          ],
        },
        old,
      ),
    ).toEqual(['spec.ports[0]: Invalid value: port may only grow']);
  });

  it('with optionalOldSelf run on create too, oldSelf being an optional', () => {
    const schema = specSchema([], {
      name: {
        type: 'string',
        'x-kubernetes-validations': [{ rule: "oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith('x')", optionalOldSelf: true }],
      },
    });
    expect(messages(schema, { name: 'abc' })).toEqual([
      `spec.name: Invalid value: "abc": failed rule: oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith('x')`,
    ]);
    expect(messages(schema, { name: 'xyz' })).toEqual([]);
    expect(messages(schema, { name: 'abc' }, { name: 'abc' })).toEqual([]);
    const orValue = specSchema([], { n: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf.orValue(0)', optionalOldSelf: true }] } });
    expect(messages(orValue, { n: 1 })).toEqual([]);
    expect(messages(orValue, { n: 1 }, { n: 2 })).toEqual(['spec.n: Invalid value: 1: failed rule: self >= oldSelf.orValue(0)']);
  });
});

describe('CEL cost bound', () => {
  it('stops a rule that would run too long and reports the budget', () => {
    const schema = specSchema([{ rule: 'self.numbers.all(a, self.numbers.all(b, self.numbers.all(c, a + b + c >= 0)))' }]);
    const numbers = Array.from({ length: 200 }, (_, i) => i);
    const started = Date.now();
    const causes = compileSchema(schema, { celBudget: 100_000 }).validate({ spec: { numbers } });
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('shares the budget between rules: later rules are not run', () => {
    const schema = specSchema([{ rule: 'self.numbers.all(a, self.numbers.all(b, true))' }, { rule: 'false' }]);
    const causes = compileSchema(schema, { celBudget: 50 }).validate({ spec: { numbers: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] } });
    expect(causes).toHaveLength(1);
    expect(causes[0]!.message).toContain('running out of cost budget');
  });
});
