import { describe, expect, it } from 'vitest';
import { sameStringMap } from './string-maps.js';

describe('sameStringMap', () => {
  it('compares keys and values, not order, and reads an absent map as empty', () => {
    expect(sameStringMap({ a: '1', b: '2' }, { b: '2', a: '1' })).toBe(true);
    expect(sameStringMap({ a: '1' }, { a: '2' })).toBe(false);
    expect(sameStringMap({ a: '1' }, { a: '1', b: '' })).toBe(false);
    expect(sameStringMap({ a: '1' }, { b: '1' })).toBe(false);
    expect(sameStringMap(undefined, {})).toBe(true);
    expect(sameStringMap(null, { a: '1' })).toBe(false);
  });
});
