import { describe, expect, it } from 'vitest';
import type { Pod, Service } from '@skiff/api';
import { formatTriggerTime, TriggerTimeTracker } from './trigger-time.js';

const service = (name: string): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', creationTimestamp: '2025-01-01T00:00:00Z' },
  spec: { selector: { app: name } },
});

/** A pod whose Ready condition last changed at `readySince`. */
const pod = (name: string, { readySince }: { readySince: string }): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
  status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: readySince }] },
});

describe('formatTriggerTime', () => {
  it('prints RFC 3339 in UTC, with a fraction only when there is one', () => {
    expect(formatTriggerTime(Date.parse('2025-03-04T05:06:07Z'))).toBe('2025-03-04T05:06:07Z');
    expect(formatTriggerTime(Date.parse('2025-03-04T05:06:07.120Z'))).toBe('2025-03-04T05:06:07.12Z');
  });
});

describe('TriggerTimeTracker', () => {
  const web = service('web');

  it('answers the Service creation the first time, then the earliest change since the last sync, then nothing', () => {
    const tracker = new TriggerTimeTracker();
    const a = pod('a', { readySince: '2025-01-01T00:01:00Z' });
    expect(tracker.compute('default/web', web, [a])).toBe('2025-01-01T00:00:00Z');
    expect(tracker.compute('default/web', web, [a])).toBeUndefined();
    const b = pod('b', { readySince: '2025-01-01T00:03:00Z' });
    const aAgain = pod('a', { readySince: '2025-01-01T00:02:00Z' });
    expect(tracker.compute('default/web', web, [aAgain, b])).toBe('2025-01-01T00:02:00Z');
    expect(tracker.compute('default/web', web, [aAgain, b])).toBeUndefined();
    tracker.forget('default/web');
    expect(tracker.compute('default/web', web, [aAgain, b])).toBe('2025-01-01T00:00:00Z');
  });
});
