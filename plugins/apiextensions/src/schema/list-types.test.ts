import { describe, expect, it } from 'vitest';
import { compileSchema, type JSONSchemaProps } from './index.js';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        routes: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['host', 'port'],
          items: { type: 'object', required: ['host', 'port'], properties: { host: { type: 'string' }, port: { type: 'integer' } } },
        },
        atomic: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string' } },
        byName: { type: 'object', additionalProperties: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } } },
      },
    },
  },
};
const compiled = compileSchema(schema);
const causes = (spec: unknown, oldSpec?: unknown) =>
  compiled.validate({ spec }, oldSpec === undefined ? undefined : { spec: oldSpec }).map((c) => `${c.type} ${c.field}: ${c.message}`);

describe('list types', () => {
  it.each<[string, unknown, string[]]>([
    ['a set without duplicates', { tags: ['a', 'b'] }, []],
    ['a set with duplicates names the second occurrence once', { tags: ['a', 'b', 'a', 'a'] }, ['FieldValueDuplicate spec.tags[2]: Duplicate value: "a"']],
    ['atomic lists may repeat', { atomic: ['a', 'a'] }, []],
    [
      'a map list with unique keys',
      {
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 1 },
        ],
      },
      [],
    ],
    [
      'a map list with a repeated key',
      {
        ports: [
          { name: 'a', port: 1 },
          { name: 'a', port: 2 },
        ],
      },
      ['FieldValueDuplicate spec.ports[1]: Duplicate value: {"name":"a"}'],
    ],
    [
      'a map list with composite keys',
      {
        routes: [
          { host: 'h', port: 1 },
          { host: 'h', port: 2 },
          { port: 1, host: 'h' },
        ],
      },
      ['FieldValueDuplicate spec.routes[2]: Duplicate value: {"host":"h","port":1}'],
    ],
    ['a set inside an additionalProperties map', { byName: { x: [1, 1] } }, ['FieldValueDuplicate spec.byName[x][1]: Duplicate value: 1']],
  ])('%s', (_name, spec, expected) => {
    expect(causes(spec)).toEqual(expected);
  });

  it('an item that is not an object in a map list is invalid', () => {
    expect(causes({ ports: ['x'] })).toContain('FieldValueInvalid spec.ports[0]: Invalid value: "x": must be an object for an array of list-type map');
  });

  it('on update, duplicates are only reported when the stored object had none', () => {
    expect(causes({ tags: ['a', 'a'] }, { tags: ['b'] })).toEqual(['FieldValueDuplicate spec.tags[1]: Duplicate value: "a"']);
    expect(causes({ tags: ['a', 'a'] }, { tags: ['b', 'b'] })).toEqual([]);
  });
});
