// events.k8s.io/v1: events in their newer shape — who reported what, when, about which object. Stored
// apart from core v1 events (docs/kinds.md); printed with the same columns.
import { defineKind, humanAge, RESOURCES, type EventsV1Event, type ObjectReference, type ResourceDefinition, type StatusCause } from '@skiff/api';
import { fieldErrors, isDNS1123Subdomain, validateImmutable, validateQualifiedName } from '@skiff/api/validation';
import { column, computed, NAME_COLUMN } from './columns.js';
import { atMost, EVENT_TEXT_LIMITS } from './core/events.js';
import { selectorField } from './field-selectors.js';

const EVENT_TYPES = ['Normal', 'Warning'];

/** What an events.k8s.io client may never change once the event is recorded. */
const IMMUTABLE_FIELDS = [
  'regarding',
  'reason',
  'note',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingController',
  'reportingInstance',
] as const satisfies readonly (keyof EventsV1Event)[];

function validateEventsV1Event(event: EventsV1Event, old?: EventsV1Event): StatusCause[] {
  const causes: StatusCause[] = [];
  const namespace = event.metadata.namespace ?? '';
  const regardingNamespace = event.regarding?.namespace ?? '';
  if (!regardingNamespace && namespace !== 'default' && namespace !== 'kube-system')
    causes.push(fieldErrors.invalid('regarding.namespace', regardingNamespace, 'does not match event.namespace'));
  if (!event.eventTime) causes.push(fieldErrors.required('eventTime'));
  if (!event.reportingController) causes.push(fieldErrors.required('reportingController'));
  else causes.push(...validateQualifiedName(event.reportingController, 'reportingController'));
  if (!event.reportingInstance) causes.push(fieldErrors.required('reportingInstance'));
  causes.push(...atMost(event.reportingInstance, EVENT_TEXT_LIMITS.reportingInstance, 'reportingInstance'));
  if (!event.action) causes.push(fieldErrors.required('action'));
  causes.push(...atMost(event.action, EVENT_TEXT_LIMITS.action, 'action'));
  if (!event.reason) causes.push(fieldErrors.required('reason'));
  causes.push(...atMost(event.reason, EVENT_TEXT_LIMITS.reason, 'reason'));
  causes.push(...atMost(event.note, EVENT_TEXT_LIMITS.note, 'note'));
  causes.push(...isDNS1123Subdomain(namespace).map((message) => fieldErrors.invalid('metadata.namespace', namespace, message)));
  if (event.series) {
    if ((event.series.count ?? 0) < 2) causes.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
    if (!event.series.lastObservedTime) causes.push(fieldErrors.required('series.lastObservedTime'));
  }
  if (!EVENT_TYPES.includes(event.type ?? '')) causes.push(fieldErrors.invalid('type', '', `has invalid value: ${event.type ?? ''}`));
  // The deprecated fields are for events written through the core API; new writers leave them alone.
  if (event.deprecatedFirstTimestamp) causes.push(fieldErrors.invalid('deprecatedFirstTimestamp', '', 'needs to be unset'));
  if (event.deprecatedLastTimestamp) causes.push(fieldErrors.invalid('deprecatedLastTimestamp', '', 'needs to be unset'));
  if (event.deprecatedCount) causes.push(fieldErrors.invalid('deprecatedCount', '', 'needs to be unset'));
  if (event.deprecatedSource?.component || event.deprecatedSource?.host) causes.push(fieldErrors.invalid('deprecatedSource', '', 'needs to be unset'));
  if (old) for (const field of IMMUTABLE_FIELDS) causes.push(...validateImmutable(event[field], old[field], field));
  return causes;
}

function regardingCell(event: EventsV1Event): string {
  const kind = (event.regarding?.kind ?? '').toLowerCase();
  return event.regarding?.name ? `${kind}/${event.regarding.name}` : kind;
}

function sourceCell(event: EventsV1Event): string {
  const component = event.deprecatedSource?.component || event.reportingController || '';
  const instance = event.deprecatedSource?.host || event.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

const firstSeen = (event: EventsV1Event, now: number) => humanAge(event.deprecatedFirstTimestamp || event.eventTime, now);

function lastSeen(event: EventsV1Event, now: number): string {
  if (event.series) return humanAge(event.series.lastObservedTime, now);
  return event.deprecatedLastTimestamp ? humanAge(event.deprecatedLastTimestamp, now) : firstSeen(event, now);
}

const regarding = (field: keyof ObjectReference) => selectorField<EventsV1Event>((event) => event.regarding?.[field]);

export const events = defineKind<EventsV1Event>({
  ...RESOURCES['events.events.k8s.io'],
  columns: [
    computed<EventsV1Event>('Last Seen', lastSeen),
    column('Type', '.type'),
    column('Reason', '.reason'),
    computed<EventsV1Event>('Object', regardingCell),
    computed<EventsV1Event>('Subobject', (event) => event.regarding?.fieldPath ?? '', { priority: 1 }),
    computed<EventsV1Event>('Source', sourceCell, { priority: 1 }),
    computed<EventsV1Event>('Message', (event) => (event.note ?? '').trim()),
    computed<EventsV1Event>('First Seen', firstSeen, { priority: 1 }),
    computed<EventsV1Event>('Count', (event) => (event.series ? (event.series.count ?? 0) : event.deprecatedCount || 1), { priority: 1 }),
    { ...NAME_COLUMN, priority: 1 },
  ],
  strategy: {
    validate: validateEventsV1Event,
    fieldSelectors: {
      'regarding.kind': regarding('kind'),
      'regarding.namespace': regarding('namespace'),
      'regarding.name': regarding('name'),
      'regarding.uid': regarding('uid'),
      'regarding.apiVersion': regarding('apiVersion'),
      'regarding.resourceVersion': regarding('resourceVersion'),
      'regarding.fieldPath': regarding('fieldPath'),
      reason: selectorField<EventsV1Event>((event) => event.reason),
      reportingController: selectorField<EventsV1Event>((event) => event.reportingController),
      type: selectorField<EventsV1Event>((event) => event.type),
    },
  },
});

export const EVENTS_KINDS: ResourceDefinition[] = [events];
