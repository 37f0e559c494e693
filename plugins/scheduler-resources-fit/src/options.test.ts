import { describe, expect, it } from 'vitest';
import { checkArgs } from './options.js';
import { createResourcesFit } from './fit.js';

describe('NodeResourcesFitArgs', () => {
  it('defaults to LeastAllocated over cpu and memory, weight 1; a weight of 0 means 1', () => {
    expect(checkArgs({})).toEqual({
      ignoredResources: [],
      ignoredResourceGroups: [],
      scoringStrategy: {
        type: 'LeastAllocated',
        resources: [
          { name: 'cpu', weight: 1 },
          { name: 'memory', weight: 1 },
        ],
        requestedToCapacityRatio: { shape: [] },
      },
    });
    expect(checkArgs({ scoringStrategy: { resources: [{ name: 'cpu', weight: 0 }] } }).scoringStrategy.resources).toEqual([{ name: 'cpu', weight: 1 }]);
    expect(checkArgs({ scoringStrategy: { resources: [] } }).scoringStrategy.resources).toHaveLength(2);
  });

  it("refuses what upstream's validation refuses, in its words", () => {
    expect(() => checkArgs({ scoringStrategy: { resources: [{ name: 'cpu', weight: 101 }] } })).toThrow(
      'invalid NodeResourcesFitArgs: scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]',
    );
    expect(() => checkArgs({ ignoredResourceGroups: ['example.com/gpu'] })).toThrow(
      `ignoredResourceGroups[0]: Invalid value: "example.com/gpu": resource group name can't contain '/'`,
    );
    expect(() => checkArgs({ scoringStrategy: { type: 'RequestedToCapacityRatio' } })).toThrow(
      'scoringStrategy.shape: Required value: at least one point must be specified',
    );
    const shape = [
      { utilization: 50, score: 11 },
      { utilization: 30, score: 0 },
    ];
    expect(() => checkArgs({ scoringStrategy: { type: 'RequestedToCapacityRatio', requestedToCapacityRatio: { shape } } })).toThrow(
      'scoringStrategy.shape[1].utilization: Invalid value: 30: utilization values must be sorted in increasing order; scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]',
    );
    expect(() => checkArgs({ scoringStrategy: { type: 'Balanced' } })).toThrow('option "args.scoringStrategy.type" must be one of');
  });

  it('withArgs gives a fresh copy with the profile args, and refuses bad ones', () => {
    const base = createResourcesFit();
    const packing = base.withArgs!({ scoringStrategy: { type: 'MostAllocated' } });
    expect(packing).not.toBe(base);
    expect(() => base.withArgs!({ ignoredResources: ['not a name!'] })).toThrow('ignoredResources[0]: Invalid value: "not a name!"');
  });
});
