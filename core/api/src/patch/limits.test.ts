import { describe, expect, it } from 'vitest';
import { jsonByteLength } from './limits.js';

describe('jsonByteLength', () => {
  it.each([
    ['scalars', [0, -1.5, 1e21, true, false, null, 'text']],
    ['escapes and control characters', { 'q"uote': 'back\\slash', nl: 'a\nb\tc\u0001' }],
    ['multi-byte text', { é: 'ünïcødé ☃', emoji: '😀 pair', lone: 'x\ud800y', tail: '\udfff' }],
    ['members JSON leaves out, and undefined in arrays', { a: undefined, b: [undefined, 1], c: { d: undefined } }],
    ['non-finite numbers', [Number.NaN, Number.POSITIVE_INFINITY]],
    ['empty containers', { o: {}, a: [], nested: [[], [{}]] }],
    ['a realistic object', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { a: 'b' } }, data: { k: 'v'.repeat(300) } }],
  ])('is the byte length of JSON.stringify: %s', (_name, value) => {
    expect(jsonByteLength(value)).toBe(Buffer.byteLength(JSON.stringify(value)));
  });

  it('stops counting soon after passing the bound, on any shape', () => {
    const wide: Record<string, string> = {};
    for (let i = 0; i < 100_000; i++) wide[`k${i}`] = 'v';
    const exact = jsonByteLength(wide);
    expect(exact).toBe(Buffer.byteLength(JSON.stringify(wide)));
    const bounded = jsonByteLength(wide, 1000);
    expect(bounded).toBeGreaterThan(1000);
    expect(bounded).toBeLessThan(exact);
  });

  it('measures values nested far deeper than the stack allows recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(jsonByteLength(deep)).toBe(200_000 * 2 + 1);
  });
});
