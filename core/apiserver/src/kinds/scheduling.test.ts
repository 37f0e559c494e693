import type { KubeObject, ResourceDefinition } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { SCHEDULING_KINDS } from './scheduling.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const CREATED = new Date(NOW - 3 * 3600_000 - 5 * 60_000).toISOString();

function admit(d: ResourceDefinition, body: Record<string, unknown>, old?: KubeObject) {
  const object = structuredClone(body) as KubeObject;
  expect(d.decode!(object, true)).toEqual({ errors: [], unknownFields: [] });
  if (!old) d.prepareForCreate?.(object);
  d.defaults?.(object);
  const causes = d.validate!(object, old).map((c) => `${c.field}: ${c.message}`);
  object.metadata.creationTimestamp ??= CREATED;
  return { object, causes };
}

function create(d: ResourceDefinition, body: Record<string, unknown>): KubeObject {
  const { object, causes } = admit(d, body);
  expect(causes).toEqual([]);
  return object;
}

const fields = (d: ResourceDefinition, body: Record<string, unknown>, old?: KubeObject) => admit(d, body, old).causes;
const cells = (d: ResourceDefinition, object: KubeObject) => d.table!.cells(object, NOW);
const classes = SCHEDULING_KINDS[0]!;

describe('priority classes', () => {
  it('defaults the preemption policy and prints it wide', () => {
    const pc = create(classes, { metadata: { name: 'high' }, value: 1000, description: 'x' });
    expect(pc.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(cells(classes, pc)).toEqual(['high', 1000, false, '3h5m', 'PreemptLowerPriority']);
  });

  it('keeps value and preemption policy fixed', () => {
    const pc = create(classes, { metadata: { name: 'high' }, value: 1000 });
    expect(fields(classes, { ...pc, value: 2000, preemptionPolicy: 'Never' }, pc)).toEqual([
      'value: Forbidden: may not be changed in an update.',
      'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]);
  });

  it('reserves system- names and values above a billion', () => {
    expect(fields(classes, { metadata: { name: 'system-mine' }, value: 1 })).toEqual([
      "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    ]);
    expect(fields(classes, { metadata: { name: 'system-node-critical' }, value: 2000001000 })).toEqual([]);
    expect(fields(classes, { metadata: { name: 'huge' }, value: 1000000001 })).toEqual([
      'value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    ]);
  });
});
