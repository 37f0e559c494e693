import type { PersistentVolume } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { hostnamesOfVolume, nodeSelectorMatches, topologyAllows, volumeFitsNode } from './node-affinity.js';

const labels = { 'kubernetes.io/hostname': 'node-1', zone: 'a', cores: '8' };

const pv = (
  ...terms: {
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
    matchFields?: { key: string; operator: string; values?: string[] }[];
  }[]
): PersistentVolume => ({
  metadata: { name: 'v' },
  spec: { nodeAffinity: { required: { nodeSelectorTerms: terms } } },
});

describe('node selector matching', () => {
  it('ORs terms and ANDs the requirements of a term', () => {
    const selector = {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
        {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a'] },
            { key: 'gpu', operator: 'DoesNotExist' },
          ],
        },
      ],
    };
    expect(nodeSelectorMatches(selector, labels)).toBe(true);
    expect(nodeSelectorMatches(selector, { ...labels, gpu: 'yes' })).toBe(false);
  });

  it('knows every operator; Gt and Lt compare integers and match nothing otherwise', () => {
    const match = (operator: string, values?: string[], key = 'cores') =>
      nodeSelectorMatches({ nodeSelectorTerms: [{ matchExpressions: [{ key, operator, values }] }] }, labels);
    expect([match('Exists'), match('DoesNotExist'), match('NotIn', ['8']), match('NotIn', ['8'], 'missing')]).toEqual([true, false, false, true]);
    expect([match('Gt', ['7']), match('Gt', ['8']), match('Lt', ['9']), match('Lt', ['x']), match('Gt', ['1', '2'])]).toEqual([
      true,
      false,
      true,
      false,
      false,
    ]);
    expect(match('Near', ['8'])).toBe(false);
  });

  it('matches nothing with an empty term, and metadata.name only through matchFields', () => {
    expect(nodeSelectorMatches({ nodeSelectorTerms: [{}] }, labels)).toBe(false);
    const byName = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }] };
    expect(nodeSelectorMatches(byName, labels, 'node-1')).toBe(true);
    expect(nodeSelectorMatches(byName, labels, 'node-2')).toBe(false);
  });
});

describe('volumes and nodes', () => {
  it('lets a volume without required affinity go anywhere; judges one with it by labels only', () => {
    expect(volumeFitsNode({ metadata: { name: 'v' }, spec: {} }, labels)).toBe(true);
    expect(volumeFitsNode(pv({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }), labels)).toBe(true);
    expect(volumeFitsNode(pv({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }), labels)).toBe(false);
    // As upstream: a volume's affinity is checked against a node made of the labels alone, and a node without a
    // name has no fields, so field requirements are not checked (the shared @skiff/api matcher).
    expect(volumeFitsNode(pv({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }), labels)).toBe(true);
  });

  it('reads the nodes a local volume is pinned to: union over terms, intersection within one', () => {
    const hostname = (values: string[]) => ({ key: 'kubernetes.io/hostname', operator: 'In', values });
    expect(hostnamesOfVolume({ metadata: { name: 'v' }, spec: {} })).toEqual([]);
    expect(hostnamesOfVolume(pv({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }))).toEqual([]);
    expect(hostnamesOfVolume(pv({ matchExpressions: [hostname(['n1', 'n2']), hostname(['n2', 'n3'])] }, { matchExpressions: [hostname(['n4'])] }))).toEqual([
      'n2',
      'n4',
    ]);
  });

  it("applies a class's allowedTopologies: none allows all, an empty term allows nothing", () => {
    expect(topologyAllows(undefined, labels)).toBe(true);
    expect(topologyAllows([], labels)).toBe(true);
    expect(topologyAllows([{}], labels)).toBe(false);
    expect(
      topologyAllows([{ matchLabelExpressions: [{ key: 'zone', values: ['b'] }] }, { matchLabelExpressions: [{ key: 'zone', values: ['a', 'c'] }] }], labels),
    ).toBe(true);
    expect(
      topologyAllows(
        [
          {
            matchLabelExpressions: [
              { key: 'zone', values: ['a'] },
              { key: 'rack', values: ['1'] },
            ],
          },
        ],
        labels,
      ),
    ).toBe(false);
  });
});
