import { describe, expect, it } from 'vitest';
import { EVENTS_KINDS } from './events.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(EVENTS_KINDS);
const events = EVENTS_KINDS[0]!;
const body = {
  metadata: { name: 'web.17a', namespace: 'default' },
  eventTime: '2024-05-01T11:58:00.000000Z',
  reportingController: 'example.com/controller',
  reportingInstance: 'controller-1',
  action: 'Scale',
  reason: 'Scaled',
  regarding: { kind: 'Deployment', namespace: 'default', name: 'web' },
  note: 'scaled to 3 ',
  type: 'Normal',
};

describe('events.k8s.io events', () => {
  it('prints like the core events, wide', () => {
    const event = create(events, body) as any;
    expect(cells(events, event)).toEqual([
      '2m',
      'Normal',
      'Scaled',
      'deployment/web',
      '',
      'example.com/controller, controller-1',
      'scaled to 3',
      '2m',
      1,
      'web.17a',
    ]);
    event.series = { count: 4, lastObservedTime: '2024-05-01T11:59:30.000000Z' };
    expect([cells(events, event)[0], cells(events, event)[8]]).toEqual(['30s', 4]);
    expect(events.fieldSelectors!['regarding.name']!(event)).toBe('web');
    expect(events.fieldSelectors!.reportingController!(event)).toBe('example.com/controller');
  });

  it('requires who reported what, and leaves the deprecated fields unset', () => {
    const { reportingController: _controller, action: _action, ...rest } = body;
    const bad = { ...rest, type: 'Info', deprecatedCount: 2, series: { count: 1 } };
    expect(fields(events, bad)).toEqual([
      'reportingController: Required value',
      'action: Required value',
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
      'type: Invalid value: "": has invalid value: Info',
      'deprecatedCount: Invalid value: "": needs to be unset',
    ]);
  });

  it('keeps a recorded event fixed except its series and metadata', () => {
    const event = create(events, body) as any;
    const update = { ...structuredClone(event), note: 'other', series: { count: 2, lastObservedTime: '2024-05-01T11:59:00.000000Z' } };
    expect(fields(events, update, event)).toEqual(['note: Invalid value: "other": field is immutable']);
  });
});
