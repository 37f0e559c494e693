import { describe, expect, it } from 'vitest';
import { nestingDepth } from './limits.js';

function nested(levels: number): unknown {
  return JSON.parse('{"a":'.repeat(levels - 1) + '[]' + '}'.repeat(levels - 1));
}

describe('nestingDepth', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(nestingDepth('x')).toBe(0);
    expect(nestingDepth(null)).toBe(0);
    expect(nestingDepth({})).toBe(1);
    expect(nestingDepth({ a: [1, { b: 'c' }], d: 2 })).toBe(3);
  });

  it('measures depths that would overflow a recursive walk', () => {
    expect(nestingDepth(nested(100_000))).toBe(100_000);
  });

  it('stops counting once past the limit', () => {
    expect(nestingDepth(nested(5_000), 100)).toBe(101);
  });
});

describe('cloneJsonValue', () => {
  it('copies deeply, keeps own __proto__ keys as data, and refuses values nested deeper than asked', async () => {
    const { cloneJsonValue, NestingTooDeepError } = await import('./limits.js');
    const value = JSON.parse('{"a":[1,{"b":null}],"__proto__":{"polluted":true},"c":"x"}');
    const copy = cloneJsonValue(value);
    expect(copy).toEqual(value);
    expect(copy.a).not.toBe(value.a);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['a', '__proto__', 'c']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 10; i++) deep = [deep];
    expect(() => cloneJsonValue(deep, 10)).not.toThrow();
    expect(() => cloneJsonValue(deep, 9)).toThrow(NestingTooDeepError);
  });
});
