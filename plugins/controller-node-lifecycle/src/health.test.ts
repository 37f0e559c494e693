import type { Lease, Node } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { NodeHealthTracker } from './health.js';

const created = '2026-01-01T00:00:00Z';
const t0 = Date.parse(created);
const node = (heartbeat?: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n', creationTimestamp: created },
  status: heartbeat ? { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat, lastTransitionTime: created }] } : {},
});
const lease = (renewMs: number): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'n' },
  spec: { renewTime: new Date(renewMs).toISOString() },
});

describe('NodeHealthTracker', () => {
  it('marks a node Unknown once neither its heartbeat nor its Lease changed for the grace period', () => {
    const tracker = new NodeHealthTracker({ monitorMs: 40_000, startupMs: 60_000 });
    expect(tracker.judge(node(created), lease(t0), t0).write).toBeUndefined();
    // The Lease renewed at 30 s counts as hearing from the node then.
    expect(tracker.judge(node(created), lease(t0 + 30_000), t0 + 30_000).write).toBeUndefined();
    expect(tracker.judge(node(created), lease(t0 + 30_000), t0 + 70_000).write).toBeUndefined();
    const verdict = tracker.judge(node(created), lease(t0 + 30_000), t0 + 70_001);
    expect(verdict.observed.status).toBe('True');
    expect(verdict.current).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    expect(verdict.write!.status!.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Ready=Unknown',
      'MemoryPressure=Unknown',
      'DiskPressure=Unknown',
      'PIDPressure=Unknown',
    ]);
  });

  it('gives a node that never posted status the startup grace period from its creation', () => {
    const tracker = new NodeHealthTracker({ monitorMs: 40_000, startupMs: 60_000 });
    expect(tracker.judge(node(), undefined, t0 + 60_000).write).toBeUndefined();
    const verdict = tracker.judge(node(), undefined, t0 + 60_001);
    expect(verdict.current).toMatchObject({ status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' });
  });

  it('counts a new Ready heartbeat as hearing from the node', () => {
    const tracker = new NodeHealthTracker({ monitorMs: 40_000, startupMs: 60_000 });
    tracker.judge(node(created), undefined, t0);
    tracker.judge(node('2026-01-01T00:00:30Z'), undefined, t0 + 30_000);
    expect(tracker.judge(node('2026-01-01T00:00:30Z'), undefined, t0 + 70_000).write).toBeUndefined();
    expect(tracker.judge(node('2026-01-01T00:00:30Z'), undefined, t0 + 70_001).write).toBeDefined();
  });
});
