import { describe, expect, it } from 'vitest';
import { checkOptions } from './options.js';

describe('checkOptions', () => {
  const schema = {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string' },
      mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
      ports: { type: 'array', items: { type: 'integer', maximum: 65535 } },
      nested: { type: 'object', properties: { on: { type: 'boolean', default: false } } },
    },
  } as const;

  it('fills defaults, including nested objects', () => {
    expect(checkOptions(schema, { name: 'x' })).toEqual({ name: 'x', mode: 'a', nested: { on: false } });
  });

  it('names the path of what is wrong', () => {
    expect(() => checkOptions(schema, {})).toThrow('option "name" is required');
    expect(() => checkOptions(schema, { name: 'x', mode: 'c' })).toThrow('option "mode" must be one of "a", "b" (got "c")');
    expect(() => checkOptions(schema, { name: 'x', ports: [80, 70000] })).toThrow('option "ports[1]" must be <= 65535 (got 70000)');
    expect(() => checkOptions(schema, { name: 'x', nested: { of: true } })).toThrow('unknown option "nested.of" (known: on)');
  });
});
