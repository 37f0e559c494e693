// Core v1 events: their rules and their `kubectl get events` row. events.k8s.io's events (../events.ts)
// hold their text to the same limits.
import { defineKind, humanAge, RESOURCES, type Event, type StatusCause } from '@skiff/api';
import {
  fieldErrors,
  isDNS1123Subdomain,
  nameIsDNSSubdomain,
  validateObjectMeta,
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

/**
 * Old-style events (no eventTime) must name the involved object's namespace as their own; new-style
 * events (eventTime set) must also say who reported them and why.
 */
export function validateEvent(event: Event, old?: Event): StatusCause[] {
  const causes = validateObjectMeta(event.metadata, { namespaced: true, name: nameIsDNSSubdomain });
  const namespace = event.metadata?.namespace ?? '';
  const involvedNamespace = event.involvedObject?.namespace ?? '';
  const mismatch = () => fieldErrors.invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  if (!event.eventTime) {
    if (involvedNamespace ? namespace !== involvedNamespace : namespace !== '' && namespace !== 'default') causes.push(mismatch());
  } else {
    if (!involvedNamespace && namespace !== 'default' && namespace !== 'kube-system') causes.push(mismatch());
    if (!event.reportingComponent) causes.push(fieldErrors.required('reportingComponent'));
    causes.push(...validateQualifiedName(event.reportingComponent ?? '', 'reportingComponent'));
    if (!event.reportingInstance) causes.push(fieldErrors.required('reportingInstance'));
    causes.push(...atMost(event.reportingInstance, EVENT_TEXT_LIMITS.reportingInstance, 'reportingInstance'));
    if (!event.action) causes.push(fieldErrors.required('action'));
    causes.push(...atMost(event.action, EVENT_TEXT_LIMITS.action, 'action'));
    if (!event.reason) causes.push(fieldErrors.required('reason'));
    causes.push(...atMost(event.reason, EVENT_TEXT_LIMITS.reason, 'reason'));
    causes.push(...atMost(event.message, EVENT_TEXT_LIMITS.note, 'message'));
  }
  causes.push(...isDNS1123Subdomain(namespace).map((message) => fieldErrors.invalid('namespace', namespace, message)));
  if (old) causes.push(...validateObjectMetaUpdate(event.metadata, old.metadata));
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
    { ...NAME_COLUMN, priority: 1 },
  ],
  strategy: {
    validateAll: validateEvent,
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
      source: selectorField<Event>((e) => e.source?.component),
      type: selectorField<Event>((e) => e.type),
    },
  },
});
