import { describe, expect, it } from 'vitest';
import { duplicateJsonFields } from './duplicate-fields.js';

describe('duplicateJsonFields', () => {
  it('names keys repeated within one object, at any depth, and not across objects or in values', () => {
    expect(duplicateJsonFields('{"a":1,"b":{"c":1,"c":2},"a":3,"list":[{"x":1},{"x":2}],"s":"a\\":"}')).toEqual(['c', 'a']);
    expect(duplicateJsonFields('{"k":"k","v":["k","k"]}')).toEqual([]);
    expect(duplicateJsonFields('{"\\u0061":1,"a":2}')).toEqual(['a']);
  });
});
