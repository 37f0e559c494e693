import { describe, expect, it } from 'vitest';
import { goBadValue, goFloat, goJSON, Printed } from './causes.js';

describe('Go value printing', () => {
  it.each([
    [0.5, '0.5'],
    [123456.5, '123456.5'],
    [1000000, '1e+06'],
    [2000000.5, '2.0000005e+06'],
    [0.00001, '1e-05'],
    [-0.25, '-0.25'],
  ])('%%v of float64 %d is %s', (value, text) => {
    expect(goFloat(value)).toBe(text);
  });

  it.each<[unknown, string]>([
    [3, '3'],
    [1.5, '1.5'],
    [true, 'true'],
    ['a"b', '"a\\"b"'],
    [{ b: 1, a: ['<x>'] }, '{"a":["\\u003cx\\u003e"],"b":1}'],
    [null, 'null'],
    [new Printed('{"rule":"x"}'), '{"rule":"x"}'],
  ])('bad value %j prints as %s', (value, text) => {
    expect(goBadValue(value)).toBe(text);
  });

  it('marshals maps with sorted keys', () => {
    expect(goJSON({ z: { y: 1, x: 2 }, a: null })).toBe('{"a":null,"z":{"x":2,"y":1}}');
  });
});
