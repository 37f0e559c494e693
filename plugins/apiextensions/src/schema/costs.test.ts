import { describe, expect, it } from 'vitest';
import type { ValidationRule } from '@skiff/api';
import { costErrorMessage } from './costs.js';
import { checkSchema, type JSONSchemaProps } from './index.js';

const ROOT = 'spec.versions[0].schema.openAPIV3Schema';
const SPEC = `${ROOT}.properties[spec]`;
const withSpec = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec } });
const problems = (schema: JSONSchemaProps, costs = true) => checkSchema(schema, ROOT, { costs }).map((c) => `${c.field}: ${c.message}`);
const advice = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
const rules = (...list: string[]): ValidationRule[] => list.map((rule) => ({ rule }));

describe('the wording of a cost refusal', () => {
  it('gives the factor as upstream does', () => {
    expect(costErrorMessage('estimated rule cost', 12_000_000, 10_000_000)).toBe(`estimated rule cost exceeds budget by factor of 1.200000x ${advice}`);
    expect(costErrorMessage('estimated rule cost', 32_100_000, 10_000_000)).toBe(`estimated rule cost exceeds budget by factor of 3.2x ${advice}`);
    expect(costErrorMessage('estimated rule cost', 1e12, 10_000_000)).toBe(`estimated rule cost exceeds budget by factor of more than 100x ${advice}`);
  });
});

describe('estimated rule costs at CRD create', () => {
  const tags = (list: JSONSchemaProps, items: JSONSchemaProps = { type: 'string' }): JSONSchemaProps =>
    withSpec({ type: 'object', properties: { tags: { type: 'array', ...list, items } } });

  it('accept rules whose work the schema bounds, and cheap rules on unbounded values', () => {
    const bounded = tags({ maxItems: 100, 'x-kubernetes-validations': rules("self.all(t, t.matches('^[a-z]+$'))") }, { type: 'string', maxLength: 63 });
    expect(problems(bounded)).toEqual([]);
    const cheap = tags({ 'x-kubernetes-validations': rules('self.all(t, t.size() < 64)', 'self == oldSelf') });
    expect(problems(cheap)).toEqual([]);
    const immutableSpec = withSpec({
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string' } } },
      'x-kubernetes-validations': rules('self == oldSelf'),
    });
    expect(problems(immutableSpec)).toEqual([]);
  });

  it('refuse a rule over its limit, naming it, then the total it pushed over the CRD limit', () => {
    const nested = withSpec({
      type: 'object',
      properties: { xs: { type: 'array', items: { type: 'integer' } } },
      'x-kubernetes-validations': rules('self.xs.all(a, self.xs.all(b, self.xs.all(c, self.xs.all(d, a + b + c + d >= 0))))'),
    });
    expect(problems(nested)).toEqual([
      `${SPEC}.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${advice}`,
      `${SPEC}.x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${ROOT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${advice}`,
    ]);
  });

  it('estimate what a replace can make of a string: eight doublings of an unbounded one are refused', () => {
    const doubling = "self.s.replace('a','aa')".replace('self.s', `self.s${".replace('a','aa')".repeat(7)}`);
    const chain = withSpec({ type: 'object', properties: { s: { type: 'string' } }, 'x-kubernetes-validations': rules(`${doubling} != ''`) });
    expect(problems(chain)[0]).toMatch(
      /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of \d+\.\dx/,
    );
    const short = withSpec({ type: 'object', properties: { s: { type: 'string', maxLength: 1000 } }, 'x-kubernetes-validations': rules(`${doubling} != ''`) });
    expect(problems(short)).toEqual([]);
    const once = withSpec({ type: 'object', properties: { s: { type: 'string', 'x-kubernetes-validations': rules("self.replace('-','_') != 'x'") } } });
    expect(problems(once)).toEqual([]);
  });

  it('multiply a rule by the most times its node can occur: nested lists multiply their maxItems', () => {
    const item: JSONSchemaProps = { type: 'string', maxLength: 2000, 'x-kubernetes-validations': rules("self.matches('^[a-z]+$')") };
    const once = withSpec({ type: 'object', properties: { names: { type: 'array', maxItems: 100, items: item } } });
    expect(problems(once)).toEqual([]);
    const nested = withSpec({ type: 'object', properties: { groups: { type: 'array', maxItems: 100, items: { type: 'array', maxItems: 100, items: item } } } });
    expect(problems(nested)).toEqual([
      `${SPEC}.properties[groups].items.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.6x ${advice}`,
    ]);
    const maps = withSpec({
      type: 'object',
      properties: { byName: { type: 'object', maxProperties: 100, additionalProperties: { type: 'array', maxItems: 100, items: item } } },
    });
    expect(problems(maps)).toEqual([
      `${SPEC}.properties[byName].additionalProperties.items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.6x ${advice}`,
    ]);
  });

  it('count an unbounded list as the most items a request can hold', () => {
    const item: JSONSchemaProps = { type: 'string', maxLength: 2000, 'x-kubernetes-validations': rules("self.matches('^[a-z]+$')") };
    const unbounded = withSpec({ type: 'object', properties: { names: { type: 'array', items: item } } });
    // 3 MiB of `"",` is 1,048,576 strings.
    expect(problems(unbounded)[0]).toBe(
      `${SPEC}.properties[names].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${advice}`,
    );
  });

  it('refuse rules that each fit but together pass the CRD limit, naming the four most expensive', () => {
    // Each rule matches an unbounded string against a 117-character pattern: about 9.4 million.
    const pattern = `^${'[a-z]'.repeat(22)}[0-9]$`;
    const properties = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`f${i}`, { type: 'string', 'x-kubernetes-validations': rules(`self.matches('${pattern}')`) } as JSONSchemaProps]),
    );
    const found = problems(withSpec({ type: 'object', properties }));
    expect(found).toEqual([
      ...[0, 1, 2, 3].map(
        (i) =>
          `${SPEC}.properties[f${i}].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      ),
      `${ROOT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.132463x ${advice}`,
    ]);
    expect(problems(withSpec({ type: 'object', properties: Object.fromEntries(Object.entries(properties).slice(0, 10)) }))).toEqual([]);
  });

  it('hold a messageExpression to the limit on its own', () => {
    const schema = withSpec({
      type: 'object',
      properties: { xs: { type: 'array', items: { type: 'string' } } },
      'x-kubernetes-validations': [{ rule: 'self.xs.size() < 10', messageExpression: "self.xs.map(x, x.lowerAscii()).join(', ')" }],
    });
    expect(problems(schema)).toEqual([
      `${SPEC}.x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x ${advice}`,
      `${SPEC}.x-kubernetes-validations[0].messageExpression: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema`,
      `${ROOT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${advice}`,
    ]);
  });

  it('are not checked for a schema an update leaves as it was stored', () => {
    const nested = withSpec({
      type: 'object',
      properties: { xs: { type: 'array', items: { type: 'integer' } } },
      'x-kubernetes-validations': rules('self.xs.all(a, self.xs.all(b, a < b))'),
    });
    expect(problems(nested)).toHaveLength(3);
    expect(problems(nested, false)).toEqual([]);
  });

  it('do not run rules on defaults when a rule is over its limit', () => {
    const schema = withSpec({
      type: 'object',
      default: { s: 'aaaaaaaaaa' },
      properties: { s: { type: 'string' } },
      'x-kubernetes-validations': rules(`self.s${".replace('a','aa')".repeat(8)} == ''`),
    });
    const found = problems(schema);
    expect(found.some((p) => p.startsWith(`${SPEC}.default`))).toBe(false);
    expect(found[0]).toContain('estimated rule cost exceeds budget');
  });
});
