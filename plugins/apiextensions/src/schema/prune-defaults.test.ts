import { describe, expect, it } from 'vitest';
import { compileSchema, type JSONSchemaProps } from './index.js';

const resource = (spec: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w', labels: { a: 'b' }, unknownMetaField: 1 },
  spec,
  ...extra,
});

describe('prune', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          list: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          free: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: { known: { type: 'object', properties: { x: { type: 'string' } } } },
          },
          template: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } },
          },
          optional: { type: 'string' },
          nullableField: { type: 'string', nullable: true },
          withDefault: { type: 'string', default: 'd' },
        },
      },
    },
  };
  const compiled = compileSchema(schema);

  it('drops unknown fields and reports their paths, sorted', () => {
    const object = resource({ name: 'n', extra: 1, list: [{ a: 'x', b: 'y' }, { c: 1 }] }, { status: { s: 1 } });
    expect(compiled.prune(object)).toEqual(['spec.extra', 'spec.list[0].b', 'spec.list[1].c', 'status']);
    expect(object).toEqual(resource({ name: 'n', list: [{ a: 'x' }, {}] }));
  });

  it('keeps apiVersion, kind and the metadata of the root untouched', () => {
    const object = resource({});
    compiled.prune(object);
    expect(object.metadata).toEqual({ name: 'w', labels: { a: 'b' }, unknownMetaField: 1 });
    expect(object.apiVersion).toBe('example.com/v1');
  });

  it('keeps every key of an additionalProperties map', () => {
    const object = resource({ labels: { x: '1', y: '2' } });
    expect(compiled.prune(object)).toEqual([]);
    expect(object.spec).toEqual({ labels: { x: '1', y: '2' } });
  });

  it('keeps unknown fields below x-kubernetes-preserve-unknown-fields but prunes the specified ones', () => {
    const object = resource({ free: { anything: { deep: [1, 2] }, known: { x: 'a', y: 'b' } } });
    expect(compiled.prune(object)).toEqual(['spec.free.known.y']);
    expect(object.spec).toEqual({ free: { anything: { deep: [1, 2] }, known: { x: 'a' } } });
  });

  it('keeps apiVersion, kind and metadata of embedded resources, pruning the rest', () => {
    const template = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', anything: 1 }, spec: { replicas: 2, other: 1 }, junk: true };
    const object = resource({ template });
    expect(compiled.prune(object)).toEqual(['spec.template.junk', 'spec.template.spec.other']);
    expect((object.spec as Record<string, unknown>).template).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', anything: 1 },
      spec: { replicas: 2 },
    });
  });

  it('reports apiVersion, kind and metadata below the root as unknown when the schema lacks them', () => {
    const object = resource({ name: 'n', metadata: { x: 1 }, kind: 'K' });
    expect(compiled.prune(object)).toEqual(['spec.kind', 'spec.metadata']);
  });

  it('drops nulls of non-nullable fields without a default, keeps the others', () => {
    const object = resource({ optional: null, nullableField: null, withDefault: null });
    expect(compiled.prune(object)).toEqual([]);
    expect(object.spec).toEqual({ nullableField: null, withDefault: null });
  });

  it('keeps everything when the root preserves unknown fields', () => {
    const open = compileSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    const object = resource({ a: { b: 1 } });
    expect(open.prune(object)).toEqual([]);
    expect(object.spec).toEqual({ a: { b: 1 } });
  });
});

describe('applyDefaults', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: {
          replicas: { type: 'integer', default: 1 },
          mode: { type: 'string', default: 'fast' },
          nullableMode: { type: 'string', nullable: true, default: 'x' },
          nested: { type: 'object', properties: { depth: { type: 'integer', default: 3 } } },
          list: {
            type: 'array',
            items: { type: 'object', default: { name: 'item' }, properties: { name: { type: 'string' }, port: { type: 'integer', default: 80 } } },
          },
          map: { type: 'object', additionalProperties: { type: 'object', properties: { weight: { type: 'integer', default: 5 } } } },
          strings: { type: 'array', items: { type: 'string', default: 'none' } },
        },
      },
    },
  };
  const compiled = compileSchema(schema);
  const defaulted = (spec: unknown) => {
    const object: Record<string, unknown> = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    if (spec !== undefined) object.spec = spec;
    compiled.applyDefaults(object);
    return object.spec;
  };

  it.each<[string, unknown, unknown]>([
    ['an absent object with a default is created, then defaulted inside', undefined, { replicas: 1, mode: 'fast', nullableMode: 'x' }],
    ['absent properties get their defaults', {}, { replicas: 1, mode: 'fast', nullableMode: 'x' }],
    ['present values are kept', { replicas: 3, mode: 'slow' }, { replicas: 3, mode: 'slow', nullableMode: 'x' }],
    ['null of a non-nullable field becomes the default', { replicas: null }, { replicas: 1, mode: 'fast', nullableMode: 'x' }],
    ['null of a nullable field stays null', { nullableMode: null }, { replicas: 1, mode: 'fast', nullableMode: null }],
    ['defaults apply only inside objects that exist', { nested: {} }, { replicas: 1, mode: 'fast', nullableMode: 'x', nested: { depth: 3 } }],
    [
      'list items are defaulted, null items become the item default',
      { list: [{ name: 'a' }, null] },
      {
        replicas: 1,
        mode: 'fast',
        nullableMode: 'x',
        list: [
          { name: 'a', port: 80 },
          { name: 'item', port: 80 },
        ],
      },
    ],
    ['additionalProperties values are defaulted', { map: { x: {} } }, { replicas: 1, mode: 'fast', nullableMode: 'x', map: { x: { weight: 5 } } }],
    ['scalar items: null becomes the default', { strings: ['a', null] }, { replicas: 1, mode: 'fast', nullableMode: 'x', strings: ['a', 'none'] }],
  ])('%s', (_name, spec, expected) => {
    expect(defaulted(spec === undefined ? undefined : structuredClone(spec))).toEqual(expected);
  });

  it('applies a property default, then defaults inside it (upstream order)', () => {
    const nested = compileSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { obj: { type: 'object', default: { a: 1 }, properties: { a: { type: 'integer' }, b: { type: 'integer', default: 2 } } } },
        },
      },
    });
    const absent: Record<string, unknown> = { spec: {} };
    nested.applyDefaults(absent);
    expect(absent.spec).toEqual({ obj: { a: 1, b: 2 } });
    const noParent: Record<string, unknown> = {};
    nested.applyDefaults(noParent);
    expect(noParent).toEqual({});
  });

  it('copies defaults: changing one defaulted object leaves the next one alone', () => {
    const first: Record<string, unknown> = { spec: { list: [null] } };
    compiled.applyDefaults(first);
    ((first.spec as { list: Record<string, unknown>[] }).list[0] as Record<string, unknown>).name = 'changed';
    const second: Record<string, unknown> = { spec: { list: [null] } };
    compiled.applyDefaults(second);
    expect((second.spec as { list: unknown[] }).list[0]).toEqual({ name: 'item', port: 80 });
  });

  it('never touches the root metadata', () => {
    const withMeta = compileSchema({ type: 'object', properties: { metadata: { type: 'object' }, spec: { type: 'object', default: {} } } });
    const object: Record<string, unknown> = { metadata: { name: 'x' } };
    withMeta.applyDefaults(object);
    expect(object).toEqual({ metadata: { name: 'x' }, spec: {} });
  });
});
