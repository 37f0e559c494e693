import { eventSchema, humanAge, validateEvent, type CoreEvent, type KubeObject } from '@skiff/api';
import type { ResourceDefinition } from '@skiff/kernel';
import { column, NAME_COLUMN } from './columns.js';
import { selectorField } from './field-selectors.js';
import { ALL_VERBS, decoderFor } from './lifecycle.js';

type Event = CoreEvent & { series?: { count?: number; lastObservedTime?: string }; reportingController?: string };

/** "pod/web-1": the involved object's kind in lower case and its name. */
function target(event: Event): string {
  const kind = (event.involvedObject?.kind ?? '').toLowerCase();
  return event.involvedObject?.name ? `${kind}/${event.involvedObject.name}` : kind;
}

/** "kubelet, node-1": the reporting component and host (or instance). */
function source(event: Event): string {
  const component = event.source?.component || event.reportingComponent || '';
  const instance = event.source?.host || event.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

function eventCells(object: KubeObject, now: number): unknown[] {
  const event = object as Event;
  const firstSeen = humanAge(event.firstTimestamp || event.eventTime, now);
  let lastSeen = event.lastTimestamp ? humanAge(event.lastTimestamp, now) : firstSeen;
  let count = event.count ?? 0;
  if (event.series) {
    lastSeen = humanAge(event.series.lastObservedTime, now);
    count = event.series.count ?? 0;
  } else if (count === 0) {
    // Singleton events of the newer API carry no count.
    count = 1;
  }
  return [
    lastSeen,
    event.type ?? '',
    event.reason ?? '',
    target(event),
    event.involvedObject?.fieldPath ?? '',
    source(event),
    (event.message ?? '').trim(),
    firstSeen,
    count,
    object.metadata.name,
  ];
}

const involved = (field: keyof CoreEvent['involvedObject']) => selectorField<CoreEvent>((e) => e.involvedObject?.[field]);

export const events: ResourceDefinition = {
  group: '',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  resource: 'events',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  verbs: ALL_VERBS,
  decode: decoderFor(eventSchema),
  validate: (object, old) => validateEvent(object as CoreEvent, old as CoreEvent | undefined),
  fieldSelectors: {
    'involvedObject.kind': involved('kind'),
    'involvedObject.namespace': involved('namespace'),
    'involvedObject.name': involved('name'),
    'involvedObject.uid': involved('uid'),
    'involvedObject.apiVersion': involved('apiVersion'),
    'involvedObject.resourceVersion': involved('resourceVersion'),
    'involvedObject.fieldPath': involved('fieldPath'),
    reason: selectorField<CoreEvent>((e) => e.reason),
    reportingComponent: selectorField<CoreEvent>((e) => e.reportingComponent),
    source: selectorField<CoreEvent>((e) => e.source?.component),
    type: selectorField<CoreEvent>((e) => e.type),
  },
  table: {
    // kubectl's event columns: the wide ones sit between Object and Message.
    columns: [
      column('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
      column('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
      column('Reason', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
      column('Object', 'The object that this event is about.'),
      column(
        'Subobject',
        'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].',
        1,
      ),
      column('Source', 'The component reporting this event. Should be a short machine understandable string.', 1),
      column('Message', 'A human-readable description of the status of this operation.'),
      column('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', 1),
      column('Count', 'The number of times this event has occurred.', 1),
      { ...NAME_COLUMN, priority: 1 },
    ],
    cells: eventCells,
  },
};
