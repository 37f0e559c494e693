// Core v1 events: their rules and their `kubectl get events` row. events.k8s.io/v1 Events (../events.ts) are
// these same stored objects seen through another API, and written under its stricter rules.
import { defineKind, humanAge, RESOURCES, type Event, type StatusCause } from '@skiff/api';
import {
  fieldErrors,
  isDNS1123Subdomain,
  nameIsDNSSubdomain,
  semanticEqual,
  validateObjectMeta,
  validateImmutable,
  validateObjectMetaUpdate,
  validateQualifiedName,
} from '@skiff/api/validation';
import { column, computed, NAME_COLUMN } from '../columns.js';
import { selectorField } from '../field-selectors.js';

/** The most characters an event's text fields may hold, in either API. */
export const EVENT_TEXT_LIMITS = Object.freeze({ reportingInstance: 128, action: 128, reason: 128, note: 1024 });

/** A cause when `value` is longer than `max` characters. */
export function atMost(value: string | undefined, max: number, field: string): StatusCause[] {
  return (value ?? '').length > max ? [fieldErrors.invalid(field, '', `can have at most ${max} characters`)] : [];
}

/** The API an Event was written through: upstream holds events.k8s.io writes to more rules (named as core's fields). */
export type EventWriteApi = 'core' | 'events.k8s.io';

/**
 * Old-style events (no eventTime) must name the involved object's namespace as their own; new-style
 * events (eventTime set) must also say who reported them and why.
 */
function legacyEventRules(event: Event, through: EventWriteApi): StatusCause[] {
  const causes: StatusCause[] = [];
  const namespace = event.metadata?.namespace ?? '';
  const involvedNamespace = event.involvedObject?.namespace ?? '';
  const mismatch = () => fieldErrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  const controllerField = through === 'core' ? 'reportingComponent' : 'reportingController';
  if (!event.eventTime) {
    if (involvedNamespace ? namespace !== involvedNamespace : namespace !== '' && namespace !== 'default') causes.push(mismatch());
  } else {
    if (!involvedNamespace && namespace !== 'default' && namespace !== 'kube-system') causes.push(mismatch());
    if (!event.reportingComponent) causes.push(fieldErrors.required(controllerField));
    causes.push(...validateQualifiedName(event.reportingComponent ?? '', controllerField));
    if (!event.reportingInstance) causes.push(fieldErrors.required('reportingInstance'));
    causes.push(...atMost(event.reportingInstance, EVENT_TEXT_LIMITS.reportingInstance, 'reportingInstance'));
    if (!event.action) causes.push(fieldErrors.required('action'));
    causes.push(...atMost(event.action, EVENT_TEXT_LIMITS.action, 'action'));
    if (!event.reason) causes.push(fieldErrors.required('reason'));
    causes.push(...atMost(event.reason, EVENT_TEXT_LIMITS.reason, 'reason'));
    causes.push(...atMost(event.message, EVENT_TEXT_LIMITS.note, 'message'));
  }
  causes.push(...isDNS1123Subdomain(namespace).map((message) => fieldErrors.invalid('namespace', namespace, message)));
  return causes;
}

function seriesRules(event: Event): StatusCause[] {
  if (!event.series) return [];
  const causes: StatusCause[] = [];
  if ((event.series.count ?? 0) < 2) causes.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
  if (!event.series.lastObservedTime) causes.push(fieldErrors.required('series.lastObservedTime'));
  return causes;
}

/** The fields an events.k8s.io client may never change once the event is recorded (eventTime to the microsecond). */
const IMMUTABLE_THROUGH_EVENTS_API = ['involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type'] as const;
const IMMUTABLE_NEW_FIELDS = ['action', 'related', 'reportingComponent', 'reportingInstance'] as const;

function sameMicroTime(a: string | null | undefined, b: string | null | undefined): boolean {
  if ((a ?? '') === (b ?? '')) return true;
  const micros = (time: string) => Date.parse(time) * 1000 + Number((/\.\d{3}(\d{0,3})/.exec(time)?.[1] ?? '').padEnd(3, '0'));
  return !!a && !!b && micros(a) === micros(b);
}

/**
 * An Event's rules by the API it is written through, as upstream validates it: core writes get the old-style
 * rules; events.k8s.io writes must also carry an eventTime and a known type, leave the deprecated fields unset,
 * and may later change only their series and metadata. Fields are named as the core Event names them.
 */
export function validateEvent(event: Event, old?: Event, through: EventWriteApi = 'core'): StatusCause[] {
  const causes = validateObjectMeta(event.metadata, { namespaced: true, name: nameIsDNSSubdomain });
  causes.push(...legacyEventRules(event, through));
  if (through === 'core') {
    if (old) causes.push(...validateObjectMetaUpdate(event.metadata, old.metadata));
    return causes;
  }
  if (!old) {
    causes.push(...seriesRules(event));
    if (!event.eventTime) causes.push(fieldErrors.required('eventTime'));
    if (event.type !== 'Normal' && event.type !== 'Warning') causes.push(fieldErrors.invalid('type', '', `has invalid value: ${event.type ?? ''}`));
    if (event.firstTimestamp) causes.push(fieldErrors.invalid('firstTimestamp', '', 'needs to be unset'));
    if (event.lastTimestamp) causes.push(fieldErrors.invalid('lastTimestamp', '', 'needs to be unset'));
    if (event.count) causes.push(fieldErrors.invalid('count', '', 'needs to be unset'));
    if (event.source?.component || event.source?.host) causes.push(fieldErrors.invalid('source', '', 'needs to be unset'));
    return causes;
  }
  causes.push(...validateObjectMetaUpdate(event.metadata, old.metadata));
  if (!semanticEqual(event.series, old.series)) causes.push(...seriesRules(event));
  for (const field of IMMUTABLE_THROUGH_EVENTS_API) causes.push(...validateImmutable(event[field], old[field], field));
  if (!sameMicroTime(event.eventTime, old.eventTime)) causes.push(...validateImmutable(event.eventTime, old.eventTime, 'eventTime'));
  for (const field of IMMUTABLE_NEW_FIELDS)
    causes.push(...validateImmutable(event[field], old[field], field === 'reportingComponent' ? 'reportingController' : field));
  return causes;
}

/** "pod/web-1": the involved object's kind in lower case and its name. */
function eventTarget(event: Event): string {
  const kind = (event.involvedObject?.kind ?? '').toLowerCase();
  return event.involvedObject?.name ? `${kind}/${event.involvedObject.name}` : kind;
}

/** "kubelet, node-1": the reporting component and host (or instance). */
function eventSource(event: Event): string {
  const component = event.source?.component || event.reportingComponent || '';
  const instance = event.source?.host || event.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

const firstSeen = (event: Event, now: number) => humanAge(event.firstTimestamp || event.eventTime, now);

const involved = (field: keyof Event['involvedObject']) => selectorField<Event>((e) => e.involvedObject?.[field]);

export const events = defineKind<Event>({
  ...{},
  ...RESOURCES.events,
  columns: [
    computed<Event>('Last Seen', (event, now) =>
      event.series ? humanAge(event.series.lastObservedTime, now) : event.lastTimestamp ? humanAge(event.lastTimestamp, now) : firstSeen(event, now),
    ),
    column('Type', '.type'),
    column('Reason', '.reason'),
    computed<Event>('Object', eventTarget),
    computed<Event>('Subobject', (event) => event.involvedObject?.fieldPath ?? '', { priority: 1 }),
    computed<Event>('Source', eventSource, { priority: 1 }),
    computed<Event>('Message', (event) => (event.message ?? '').trim()),
    computed<Event>('First Seen', firstSeen, { priority: 1 }),
    computed<Event>('Count', (event) => (event.series ? (event.series.count ?? 0) : event.count || 1), { priority: 1 }),
    { ...{}, ...NAME_COLUMN, priority: 1 },
  ],
  strategy: {
    validateAll: (event, old) => validateEvent(event, old),
    fieldSelectors: {
      'involvedObject.kind': involved('kind'),
      'involvedObject.namespace': involved('namespace'),
      'involvedObject.name': involved('name'),
      'involvedObject.uid': involved('uid'),
      'involvedObject.apiVersion': involved('apiVersion'),
      'involvedObject.resourceVersion': involved('resourceVersion'),
      'involvedObject.fieldPath': involved('fieldPath'),
      reason: selectorField<Event>((e) => e.reason),
      reportingComponent: selectorField<Event>((e) => e.reportingComponent),
      // The reporting controller stands in for an Event written through events.k8s.io, which has no source.
      source: selectorField<Event>((e) => e.source?.component || e.reportingComponent),
      type: selectorField<Event>((e) => e.type),
    },
  },
});
