import { describe, expect, it } from 'vitest';
import type { ValidationRule } from '@skiff/api';
import { compileSchema, type CompileOptions, type JSONSchemaProps } from '../index.js';
import { CostMeter } from './cost.js';

// Custom resources of CRDs stored before the static limits (or with rules the estimate lets through) are
// validated under the runtime limits alone: these go straight to compileSchema, as serving does.

const specSchema = (rules: ValidationRule[], properties: Record<string, JSONSchemaProps>): JSONSchemaProps => ({
  type: 'object',
  properties: { spec: { type: 'object', 'x-kubernetes-validations': rules, properties } },
});
const FIELDS: Record<string, JSONSchemaProps> = {
  s: { type: 'string' },
  xs: { type: 'array', items: { type: 'integer' } },
  words: { type: 'array', items: { type: 'string' } },
  labels: { type: 'object', additionalProperties: { type: 'string' } },
};
const check = (rules: (string | ValidationRule)[], spec: unknown, options?: CompileOptions) =>
  compileSchema(
    specSchema(
      rules.map((r) => (typeof r === 'string' ? { rule: r } : r)),
      FIELDS,
    ),
    options,
  )
    .validate({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec })
    .map((c) => `${c.field}: ${c.message}`);
const holds = (rule: string, spec: unknown) => expect(check([rule], spec)).toEqual([]);

/** Bounds only a broken (unmetered or quadratic) implementation misses: the cases took minutes before. */
const SLOW_MS = 5_000;
const timed = <T>(fn: () => T): T => {
  const started = performance.now();
  const result = fn();
  expect(performance.now() - started).toBeLessThan(SLOW_MS);
  return result;
};

describe('the runtime cost limits', () => {
  it('cancel one evaluation past the per-call limit and run no further rules', () => {
    const rule = `self.s${".replace('a','aa')".repeat(8)} != ''`;
    const found = timed(() => check([rule, 'false'], { s: 'a'.repeat(200_000) }));
    expect(found).toEqual([
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`,
    ]);
  });

  it('cancel loops as well as function calls', () => {
    const rule = 'self.xs.all(a, self.xs.all(b, self.xs.all(c, self.xs.all(d, a + b + c + d >= 0))))';
    const found = timed(() => check([rule], { xs: Array.from({ length: 60 }, (_, i) => i) }));
    expect(found).toEqual([
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`,
    ]);
  });

  it('share one budget between the rules of an object; once it is spent no rule runs', () => {
    // Each evaluation costs 410: 2 for self.xs, 8 to copy the 80 items, 5 for each of them.
    const every = 'self.xs.all(x, x >= 0)';
    const xs = Array.from({ length: 80 }, (_, i) => i);
    expect(check([every, every], { xs }, { celBudget: 1_000, celCallLimit: 600 })).toEqual([]);
    expect(check([every, every, every, 'false'], { xs }, { celBudget: 1_000, celCallLimit: 600 })).toEqual([
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
  });

  it('count a messageExpression against the budget too', () => {
    const found = check(
      [{ rule: 'false', messageExpression: "self.words.map(w, w + '!').join(', ')" }, 'false'],
      { words: Array.from({ length: 100 }, () => 'word') },
      {
        celBudget: 1_000,
      },
    );
    expect(found).toEqual([
      'spec: Invalid value: "object": messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run',
    ]);
  });

  it('tell a passed call limit from a spent budget', () => {
    const meter = new CostMeter(100, 30);
    expect(meter.charge(20)).toBe(true);
    expect(meter.charge(20)).toBe(false);
    expect(meter.exceeded).toBe('call');
    const budget = new CostMeter(100, 60);
    budget.charge(50);
    budget.beginCall();
    expect(budget.charge(40)).toBe(true);
    expect(budget.charge(20)).toBe(false);
    expect(budget.exceeded).toBe('budget');
  });
});

describe('string functions in linear time, with Go semantics', () => {
  it('replace a 600 KB string at once', () => {
    timed(() => holds("self.s.replace('-','_') != 'x' && self.s.replace('-', '_').startsWith('__')", { s: '-'.repeat(600_000) }));
  });

  it.each([
    "'abc'.replace('', 'x') == 'xaxbxcx'",
    "'a😀b'.replace('', '-') == '-a-😀-b-'",
    "'aaaa'.replace('a', 'b', 2) == 'bbaa'",
    "'aaaa'.replace('a', 'b', -1) == 'bbbb'",
    "'aaaa'.replace('a', 'b', 0) == 'aaaa'",
    "'a$b'.replace('$', '$$') == 'a$$b'",
    "'a-b-c'.split('-', 2) == ['a', 'b-c']",
    "'a-b-c'.split('-', 0) == []",
    "'a-b-c'.split('-', -1) == ['a', 'b', 'c']",
    "'a😀b'.split('') == ['a', '😀', 'b']",
    "'AbÄ'.lowerAscii() == 'abÄ' && 'aBä'.upperAscii() == 'ABä'",
    "['a', 'b'].join() == 'ab' && ['a', 'b'].join('-') == 'a-b'",
    "'a😀b'.size() == 3 && size('a😀b') == 3",
    "int('000000000000000000000000000042') == 42",
  ])('%s', (rule) => {
    holds(rule, {});
  });

  it('measure a long string once per validation however often a rule asks', () => {
    timed(() => holds('self.xs.all(x, self.s.size() == 1000000)', { s: 'x'.repeat(1_000_000), xs: Array.from({ length: 20_000 }, (_, i) => i) }));
  });

  it('refuse to compile a pattern too long for @bufbuild/re2 (it compiles long literals in quadratic time)', () => {
    const found = timed(() => check(["'x'.matches(self.s)"], { s: 'a'.repeat(100_000) }));
    expect(found).toEqual(['spec: Invalid value: "object": error parsing regexp: expression too large evaluating rule: \'x\'.matches(self.s)']);
  });

  it('charge compiling each pattern a rule has not used before', () => {
    const patterns = Array.from({ length: 400 }, (_, i) => `${i}${'a'.repeat(4_000)}`);
    const found = timed(() => check(["self.words.all(p, !'x'.matches(p))"], { words: patterns }));
    expect(found[0]).toContain('call cost exceeds limit');
  });

  it('refuse an integer text too long for 64 bits before parsing it', () => {
    const found = timed(() => check(['int(self.s) > 0'], { s: '9'.repeat(1_000_000) }));
    expect(found).toEqual(['spec: Invalid value: "object": int overflow during type conversion evaluating rule: int(self.s) > 0']);
  });
});

describe('comprehensions and collections under the meter', () => {
  it.each([
    'self.xs.map(x, x * 2) == [2, 4, 6]',
    'self.xs.filter(x, x > 1) == [2, 3]',
    'self.xs.map(x, x > 1, x * 10) == [20, 30]',
    'self.xs.map(x, self.xs.map(y, x * y)) == [[1, 2, 3], [2, 4, 6], [3, 6, 9]]',
    '[self.xs.map(x, x)].all(l, (l + [9]).size() == l.size() + 1 && l.size() == 3)',
    'self.xs.all(x, [self.xs.filter(y, y != x)].all(l, l.size() == 2))',
    "self.words[1] == 'b' && self.labels['app'] == 'web' && !(1 in self.labels)",
    "'b' in self.words && self.words.indexOf('c') == 2 && [[1], [2]].lastIndexOf([2]) == 1",
  ])('%s', (rule) => {
    holds(rule, { xs: [1, 2, 3], words: ['a', 'b', 'c'], labels: { app: 'web' } });
  });

  it('word a missing key or index as before', () => {
    expect(check(['self.labels[1] == "x"', 'self.words[5] == "x"'], { words: ['a'], labels: { app: 'web' } })).toEqual([
      'spec: Invalid value: "object": index 1 out of bounds [0, -1) evaluating rule: self.labels[1] == "x"',
      'spec: Invalid value: "object": index 5 out of bounds [0, -1) evaluating rule: self.words[5] == "x"',
    ]);
  });

  it('build map() results in linear time', () => {
    // About 14 a step, 10 of them for the [x + 1] literal map() appends (upstream's list literal cost).
    const xs = Array.from({ length: 50_000 }, (_, i) => i);
    timed(() => holds('self.xs.map(x, x + 1).size() == 50000', { xs }));
  });

  it('charge equality for every item it compares', () => {
    const words = Array.from({ length: 2_000 }, () => 'w'.repeat(100));
    const found = timed(() => check(['self.words.all(w, self.words == self.words.map(x, x))'], { words }));
    expect(found[0]).toContain('call cost exceeds limit');
  });
});
