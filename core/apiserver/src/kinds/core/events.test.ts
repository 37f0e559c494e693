import type { Event } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { validateEvent } from './events.js';

const messages = (causes: { field?: string; message?: string }[]) => causes.map((c) => `${c.field}: ${c.message}`);

describe('validateEvent', () => {
  const event = (): Event => ({
    metadata: { name: 'web-1.17a0', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u' },
    reason: 'Scheduled',
    message: 'Successfully assigned default/web-1 to node-1',
    type: 'Normal',
    source: { component: 'default-scheduler' },
  });

  it('requires the involved object to live in the event’s namespace', () => {
    expect(validateEvent(event())).toEqual([]);
    const moved = event();
    moved.involvedObject.namespace = 'other';
    expect(messages(validateEvent(moved))).toEqual(['involvedObject.namespace: Invalid value: "other": does not match event.namespace']);
  });

  it('requires who reported a new-style event and why', () => {
    const fresh = { ...event(), eventTime: '2024-01-01T00:00:00.000000Z', reason: '' };
    expect(messages(validateEvent(fresh))).toEqual([
      'reportingComponent: Required value',
      expect.stringMatching(/^reportingComponent: Invalid value: "": name part must be non-empty$/),
      expect.stringMatching(/^reportingComponent: Invalid value: "": name part must consist/),
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
    ]);
  });
});
