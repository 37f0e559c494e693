import type { Node, Taint } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { conditionTaintChanges, evictionDelayMs, swapTaints } from './taints.js';

const node = (conditions: [string, string][], taints: Taint[] = [], unschedulable = false): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n' },
  spec: { taints, unschedulable },
  status: { conditions: conditions.map(([type, status]) => ({ type, status })) },
});

describe('conditionTaintChanges', () => {
  it('adds the NoSchedule taint of each condition and of cordon', () => {
    const changes = conditionTaintChanges(
      node(
        [
          ['Ready', 'Unknown'],
          ['DiskPressure', 'True'],
          ['MemoryPressure', 'False'],
        ],
        [],
        true,
      ),
    );
    expect(changes.add).toEqual([
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
    ]);
    expect(changes.remove).toEqual([]);
  });

  it('removes condition taints the conditions no longer call for, and leaves other taints alone', () => {
    const taints: Taint[] = [
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' },
      { key: 'dedicated', value: 'db', effect: 'NoSchedule' },
    ];
    expect(conditionTaintChanges(node([['Ready', 'True']], taints))).toEqual({ add: [], remove: [taints[0]] });
    expect(
      conditionTaintChanges(
        node(
          [
            ['Ready', 'False'],
            ['NetworkUnavailable', 'True'],
          ],
          taints,
        ),
      ),
    ).toEqual({
      add: [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }],
      remove: [],
    });
  });
});

describe('swapTaints', () => {
  it('stamps added NoExecute taints, replaces by key and effect, and reports no change as undefined', () => {
    const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
    const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
    expect(swapTaints([unreachable], [notReady], [unreachable], 'T')).toEqual([{ ...notReady, timeAdded: 'T' }]);
    expect(swapTaints([notReady], [notReady], [], 'T')).toBeUndefined();
    expect(swapTaints([], [], [notReady], 'T')).toBeUndefined();
  });
});

describe('evictionDelayMs', () => {
  const taint: Taint = { key: 'dedicated', value: 'db', effect: 'NoExecute' };
  it('is 0 for an untolerated taint or a non-positive toleration', () => {
    expect(evictionDelayMs([taint], [])).toBe(0);
    expect(evictionDelayMs([taint], [{ key: 'other', operator: 'Exists' }])).toBe(0);
    expect(evictionDelayMs([taint], [{ key: 'dedicated', operator: 'Exists', tolerationSeconds: 0 }])).toBe(0);
  });
  it('is the smallest tolerationSeconds of the tolerations in use, or Infinity when none is bounded', () => {
    const other: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
    const tolerations = [
      { key: 'dedicated', operator: 'Equal', value: 'db', tolerationSeconds: 30 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
    ];
    expect(evictionDelayMs([taint, other], tolerations)).toBe(30_000);
    expect(evictionDelayMs([other], tolerations)).toBe(300_000);
    expect(evictionDelayMs([taint], [{ operator: 'Exists' }])).toBe(Infinity);
  });
});
