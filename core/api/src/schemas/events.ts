import { objectsIn, t } from './language.js';
import { objectMetaSchema, typeMetaFields } from './meta.js';
import { objectReferenceSchema } from './object-reference.js';

const object = objectsIn('io.k8s.api.core.v1');

/** core/v1 Event: what `kubectl describe` and `kubectl get events` read. */
export const eventSchema = object(
  'Event',
  {
    ...typeMetaFields,
    metadata: objectMetaSchema,
    involvedObject: objectReferenceSchema,
    reason: t.string("This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    message: t.string('A human-readable description of the status of this operation.'),
    source: object(
      'EventSource',
      { component: t.string('Component from which the event is generated.'), host: t.string('Node name on which the event is generated.') },
      'EventSource contains information for an event.',
    ),
    firstTimestamp: t.time('The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
    lastTimestamp: t.time('The time at which the most recent occurrence of this event was recorded.'),
    count: t.int32('The number of times this event has occurred.'),
    type: t.string('Type of this event (Normal, Warning), new types could be added in the future'),
    eventTime: t.time('Time when this Event was first observed.'),
    series: object(
      'EventSeries',
      {
        count: t.int32('Number of occurrences in this series up to the last heartbeat time'),
        lastObservedTime: t.time('Time of the last occurrence observed'),
      },
      'EventSeries contain information on series of events, i.e. thing that was/is happening continuously for some time.',
    ),
    action: t.string('What action was taken/failed regarding to the Regarding object.'),
    related: objectReferenceSchema,
    reportingComponent: t.string('Name of the controller that emitted this Event, e.g. `kubernetes.io/kubelet`.'),
    reportingInstance: t.string('ID of the controller instance, e.g. `kubelet-xyzf`.'),
  },
  'Event is a report of an event somewhere in the cluster.',
  { group: '', version: 'v1', kind: 'Event' },
);
