import { describe, expect, it } from 'vitest';
import { tooMany } from './field.js';

describe('field errors', () => {
  it('words a list over its limit as field.TooMany does', () => {
    expect(tooMany('spec.rules', 21, 20)).toEqual({ type: 'FieldValueTooMany', field: 'spec.rules', message: 'Too many: 21: must have at most 20 items' });
  });
});
