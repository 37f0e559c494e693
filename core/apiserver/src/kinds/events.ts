// events.k8s.io/v1: events in their newer shape — who reported what, when, about which object. As upstream,
// they are the core v1 Events, stored once and seen through two APIs: `kubectl get events` lists what
// events.k8s.io clients (kube-scheduler's recorder) write, and the other way round.
import { defineKind, RESOURCES, type Event, type EventsV1Event, type KubeObject, type ResourceDefinition, type VersionConversion } from '@skiff/api';
import { validateEvent } from './core/events.js';

/** A field that has a value, under `name`; nothing for an absent one. */
function present<T>(name: string, value: T | undefined): Record<string, T> {
  return value === undefined ? {} : { [name]: value };
}

/** An events.k8s.io/v1 Event as the core Event it is stored as. */
export function toCoreEvent(event: EventsV1Event): Event {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: event.metadata,
    involvedObject: event.regarding ?? {},
    ...present('reason', event.reason),
    ...present('message', event.note),
    ...present('source', event.deprecatedSource),
    ...present('firstTimestamp', event.deprecatedFirstTimestamp),
    ...present('lastTimestamp', event.deprecatedLastTimestamp),
    ...present('count', event.deprecatedCount),
    ...present('type', event.type),
    ...present('eventTime', event.eventTime),
    ...present('series', event.series),
    ...present('action', event.action),
    ...present('related', event.related),
    ...present('reportingComponent', event.reportingController),
    ...present('reportingInstance', event.reportingInstance),
  };
}

/** A stored core Event as events.k8s.io/v1 shows it. */
export function toEventsV1Event(event: Event): EventsV1Event {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: event.metadata,
    eventTime: event.eventTime ?? null,
    ...present('series', event.series as EventsV1Event['series']),
    ...present('reportingController', event.reportingComponent),
    ...present('reportingInstance', event.reportingInstance),
    ...present('action', event.action),
    ...present('reason', event.reason),
    ...present('regarding', event.involvedObject),
    ...present('related', event.related),
    ...present('note', event.message),
    ...present('type', event.type),
    ...present('deprecatedSource', event.source),
    ...present('deprecatedFirstTimestamp', event.firstTimestamp),
    ...present('deprecatedLastTimestamp', event.lastTimestamp),
    ...present('deprecatedCount', event.count),
  };
}

/** The field selectors events.k8s.io/v1 offers, by the core Event's labels they read (upstream's mapping). */
const FIELD_LABELS = Object.freeze({
  reason: 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
  type: 'type',
  'metadata.namespace': 'metadata.namespace',
  'metadata.name': 'metadata.name',
});

const conversion: VersionConversion = {
  storage: { group: RESOURCES.events.group, resource: RESOURCES.events.resource },
  toStorage: (object: KubeObject) => toCoreEvent(object as EventsV1Event),
  fromStorage: (object: KubeObject) => toEventsV1Event(object as Event),
  fieldLabels: FIELD_LABELS,
  validate: (object, old) => validateEvent(object as Event, old as Event | undefined, 'events.k8s.io'),
};

export const events = defineKind<EventsV1Event>({ ...{}, ...RESOURCES['events.events.k8s.io'], conversion });

export const EVENTS_KINDS: ResourceDefinition[] = [events];
