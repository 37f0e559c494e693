import { RE2JS } from '@bufbuild/re2';
import { describe, expect, it } from 'vitest';
import { checkSchema, type JSONSchemaProps } from './index.js';
import { compileNode } from './node.js';
import {
  checkPatternTotals,
  MAX_CRD_PATTERN_BYTES,
  MAX_CRD_PATTERN_COST,
  MAX_PATTERN_BYTES,
  MAX_PATTERN_COST,
  patternLimitCause,
  patternTotals,
} from './patterns.js';
import { isCompiled, patternCost } from './regex.js';

const ROOT = 'spec.versions[0].schema.openAPIV3Schema';
const withPattern = (pattern: string, extra: JSONSchemaProps = {}): JSONSchemaProps => ({
  type: 'object',
  properties: { s: { type: 'string', pattern, ...extra } },
});
const problems = (schema: JSONSchemaProps, patternLimits?: boolean) => checkSchema(schema, ROOT, { patternLimits }).map((c) => `${c.field}: ${c.message}`);

// The program RE2 builds, to hold the estimate against (instructions plus the 2 every program has).
const instructions = (pattern: string): number => (RE2JS.compile(pattern).re2() as unknown as { prog: { numInst(): number } }).prog.numInst() - 2;

describe('patternCost', () => {
  it.each([
    'abc',
    '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    'a{1,1000}',
    '(?:ab){3,5}c{2,}d{0,}e{4}',
    '(?i)x(?P<n>y)?z+?',
    '\\Qa*b(\\E+',
    '(a|bc|[d-f])*|g',
    '[]a]\\x{41}\\x41\\d\\.',
    '(?:(?:[a-z]{1,10}){10}){10}',
  ])('is at least the size of the program RE2 builds for %s', (pattern) => {
    expect(patternCost(pattern)).toBeGreaterThanOrEqual(instructions(pattern));
  });

  it('multiplies what a repetition repeats and adds 100 for each Unicode class written', () => {
    expect(patternCost('a{1,1000}'.repeat(10))).toBe(19_990);
    expect(patternCost('\\pL')).toBe(101);
    expect(patternCost('[\\p{Greek}\\pN_]')).toBe(201);
    expect(patternCost('\\pL{1,1000}')).toBe(2_099);
  });
});

describe('pattern limits at CRD create', () => {
  it('name the limit a pattern is over as a field error', () => {
    expect(patternLimitCause('a'.repeat(MAX_PATTERN_BYTES + 1), 'x.pattern')).toMatchObject({ type: 'FieldValueTooLong', field: 'x.pattern' });
    expect(patternLimitCause('a{1,1000}', 'x.pattern')).toBeUndefined();
  });

  it('accept patterns up to the limits', () => {
    expect(problems(withPattern('a'.repeat(MAX_PATTERN_BYTES)))).toEqual([]);
    expect(problems(withPattern('[a-z]{1,1000}'.repeat(8)))).toEqual([]);
  });

  it('refuse a pattern longer than the limit, in bytes, without compiling it', () => {
    const long = 'a'.repeat(100_000);
    expect(problems(withPattern(long))).toEqual([`${ROOT}.properties[s].pattern: Too long: may not be more than ${MAX_PATTERN_BYTES} bytes`]);
    expect(isCompiled(long)).toBe(false);
    expect(problems(withPattern('é'.repeat(MAX_PATTERN_BYTES / 2 + 1)))).toEqual([
      `${ROOT}.properties[s].pattern: Too long: may not be more than ${MAX_PATTERN_BYTES} bytes`,
    ]);
  });

  it('refuse a short pattern whose repetitions expand past the cost limit', () => {
    const pattern = 'a{1,1000}'.repeat(9);
    expect(patternCost(pattern)).toBeGreaterThan(MAX_PATTERN_COST);
    expect(problems(withPattern(pattern))).toEqual([
      `${ROOT}.properties[s].pattern: Forbidden: compiles to about 17991 instructions, more than the ${MAX_PATTERN_COST} a pattern may (each copy a repetition makes counts, and 100 for each Unicode class)`,
    ]);
    expect(isCompiled(pattern)).toBe(false);
  });

  it('name patterns wherever they are: items, additionalProperties, allOf', () => {
    const long = 'b'.repeat(MAX_PATTERN_BYTES + 1);
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'string', pattern: long } },
        map: { type: 'object', additionalProperties: { type: 'string', pattern: long } },
        s: { type: 'string', allOf: [{ pattern: long }] },
      },
    };
    expect(problems(schema)).toEqual([
      `${ROOT}.properties[list].items.pattern: Too long: may not be more than 4096 bytes`,
      `${ROOT}.properties[map].additionalProperties.pattern: Too long: may not be more than 4096 bytes`,
      `${ROOT}.properties[s].allOf[0].pattern: Too long: may not be more than 4096 bytes`,
    ]);
  });

  it('are not held against a schema an update leaves as stored, which is then not compiled either', () => {
    const long = 'c'.repeat(100_000);
    const schema = withPattern(long, { default: 'c' });
    const started = performance.now();
    expect(problems(schema, false)).toEqual([]);
    expect(isCompiled(long)).toBe(false);
    // Compiling it would take over a minute; a check that only walks it is far quicker.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('pattern totals of a CRD', () => {
  const many = (count: number, unit: (i: number) => string) => Array.from({ length: count }, (_, i) => withPattern(unit(i)));

  it('add up the bytes and costs of every version, leaving out patterns refused on their own', () => {
    expect(patternTotals([withPattern('abc'), undefined, withPattern('a{1,10}')])).toEqual({ bytes: 10, cost: 22 });
    expect(patternTotals([withPattern('abc'), withPattern('a'.repeat(MAX_PATTERN_BYTES + 1)), withPattern('a{1,1000}'.repeat(9))])).toEqual({
      bytes: 3,
      cost: 3,
    });
  });

  it('refuse more bytes than the limit on create', () => {
    const totals = patternTotals(many(9, (i) => `${i}`.padEnd(MAX_PATTERN_BYTES, 'x')));
    expect(totals.bytes).toBeGreaterThan(MAX_CRD_PATTERN_BYTES);
    expect(checkPatternTotals(totals, undefined, 'spec.versions').map((c) => `${c.field}: ${c.message}`)).toEqual([
      `spec.versions: Forbidden: the patterns of all versions' schemas have 36864 bytes together, more than the ${MAX_CRD_PATTERN_BYTES} allowed`,
    ]);
  });

  it('refuse a larger estimated cost than the limit on create', () => {
    const totals = patternTotals(many(5, (i) => `${i}${'a{1,1000}'.repeat(8)}`));
    expect(checkPatternTotals(totals, undefined, 'spec.versions').map((c) => c.message)).toEqual([
      `Forbidden: the patterns of all versions' schemas compile to about ${totals.cost} instructions together, more than the ${MAX_CRD_PATTERN_COST} allowed`,
    ]);
  });

  it('let an update keep totals over the limits, but not grow them', () => {
    const over = { bytes: MAX_CRD_PATTERN_BYTES * 2, cost: MAX_CRD_PATTERN_COST * 2 };
    expect(checkPatternTotals(over, over, 'spec.versions')).toEqual([]);
    expect(checkPatternTotals({ bytes: over.bytes - 1, cost: over.cost }, over, 'spec.versions')).toEqual([]);
    expect(checkPatternTotals({ bytes: over.bytes + 1, cost: over.cost }, over, 'spec.versions')).toHaveLength(1);
  });
});

describe('patterns of a served schema', () => {
  it('compile when a value is first matched, so serving a stored CRD does not wait for them', () => {
    const pattern = `^lazy-${'x'.repeat(5000)}$`;
    const node = compileNode(withPattern(pattern)).properties!.get('s')!;
    expect(isCompiled(pattern)).toBe(false);
    expect(node.pattern!.test('lazy-x')).toBe(false);
    expect(isCompiled(pattern)).toBe(true);
    expect(node.pattern!.error).toBeUndefined();
    expect(compileNode(withPattern('(a')).properties!.get('s')!.pattern!.error).toBe('error parsing regexp: missing closing ): `(a`');
  });
});
