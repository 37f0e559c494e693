import { describe, expect, it } from 'vitest';
import { SCHEDULING_KINDS } from './scheduling.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(SCHEDULING_KINDS);
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
