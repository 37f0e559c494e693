import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts object keys at every level, inside arrays too', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[{"x":2,"y":1}]},"b":1}');
  });

  it('leaves undefined members out and writes undefined array items as null, as JSON does', () => {
    const value = { a: undefined, b: [undefined, 1] };
    expect(canonicalJson(value)).toBe('{"b":[null,1]}');
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it('writes scalars as JSON does', () => {
    expect([canonicalJson('a"b'), canonicalJson(1.5), canonicalJson(true), canonicalJson(null)]).toEqual(['"a\\"b"', '1.5', 'true', 'null']);
  });
});
