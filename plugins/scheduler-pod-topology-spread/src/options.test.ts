import { describe, expect, it } from 'vitest';
import { createPodTopologySpread } from './plugin.js';

const zone = { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' };
const withArgs = (args: Record<string, unknown>) => createPodTopologySpread().withArgs!(args);

describe('PodTopologySpreadArgs (withArgs)', () => {
  it('gives a fresh instance for List defaults', () => {
    const base = createPodTopologySpread();
    const configured = base.withArgs!({ defaultingType: 'List', defaultConstraints: [zone] });
    expect(configured).not.toBe(base);
    expect(configured.name).toBe('PodTopologySpread');
  });

  it("refuses what upstream's validation refuses, naming the field", () => {
    expect(() => withArgs({ defaultConstraints: [zone] })).toThrow('defaultingType: Invalid value: "System": when .defaultConstraints are not empty');
    expect(() => withArgs({ defaultingType: 'List', defaultConstraints: [{ ...zone, labelSelector: { matchLabels: { a: 'b' } } }] })).toThrow(
      'defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod',
    );
    expect(() => withArgs({ defaultingType: 'List', defaultConstraints: [zone, zone] })).toThrow(
      'defaultConstraints[1]: Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"',
    );
    expect(() => withArgs({ defaultingType: 'List', defaultConstraints: [{ ...zone, maxSkew: 0 }] })).toThrow(
      'defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)',
    );
    expect(() => withArgs({ defaultingType: 'List', defaultConstraints: [{ ...zone, whenUnsatisfiable: 'Sometimes' }] })).toThrow(
      'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"',
    );
    expect(() => withArgs({ defaultingType: 'List', defaultConstraints: [{ ...zone, topologyKey: 'bad key' }] })).toThrow(
      'defaultConstraints[0].topologyKey: Invalid value',
    );
    expect(() => withArgs({ defaultingType: 'Sometimes' })).toThrow('option "args.defaultingType" must be one of "System", "List"');
    expect(() => withArgs({ defaultingType: 'List', defaultConstraints: [{ topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }] })).toThrow(
      'option "args.defaultConstraints[0].maxSkew" is required',
    );
  });

  it("registers upstream's events: any assigned pod change, a node's add, delete or label change", () => {
    expect(createPodTopologySpread().events).toEqual([
      { resource: 'Pod', actions: ['*'] },
      { resource: 'Node', actions: ['Add', 'Delete', 'UpdateNodeLabel'] },
    ]);
  });
});
