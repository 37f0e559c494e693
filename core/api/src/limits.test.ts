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
