import { describe, expect, expectTypeOf, it } from 'vitest';
import { checkOptions } from './options.js';
import { definePlugin, type PluginOptions } from './plugin.js';

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

describe('options typed from their schema', () => {
  const plugin = definePlugin({
    name: 'typed',
    version: '1.0.0',
    kernel: '^0.1.0',
    options: {
      type: 'object',
      required: ['label'],
      properties: {
        label: { type: 'string' },
        message: { type: 'string', default: 'no' },
        mode: { type: 'string', enum: ['a', 'b'] },
        count: { type: 'integer', minimum: 0 },
        tags: { type: 'array', items: { type: 'string' }, default: [] },
        nested: { type: 'object', properties: { on: { type: 'boolean', default: true } } },
        weights: { type: 'object', additionalProperties: { type: 'number' } },
      },
    },
    apply() {},
  });

  it('makes required, defaulted and object options present and the rest optional', () => {
    expectTypeOf<PluginOptions<typeof plugin>>().toEqualTypeOf<{
      label: string;
      message: string;
      tags: string[];
      nested: { on: boolean };
      weights: Record<string, number>;
      mode?: 'a' | 'b';
      count?: number;
    }>();
    // What checkOptions returns at run time has exactly that shape.
    const checked = checkOptions(plugin.options, { label: 'x', weights: { a: 1 } });
    expect(checked).toEqual({ label: 'x', message: 'no', tags: [], nested: { on: true }, weights: { a: 1 } });
  });

  it('gives a plugin without a schema no options', () => {
    const bare = definePlugin({ name: 'bare', version: '1.0.0', kernel: '^0.1.0', apply() {} });
    expectTypeOf<PluginOptions<typeof bare>>().toEqualTypeOf<Record<string, never>>();
    expect(bare.options).toBeUndefined();
  });
});
