import type { Event, StatusCause } from '../types.js';
import { invalid, required } from './field.js';
import { validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName } from './meta.js';
import { isDNS1123Subdomain, nameIsDNSSubdomain } from './names.js';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

function limit(value: string | undefined, max: number, field: string): StatusCause[] {
  return (value ?? '').length > max ? [invalid(field, '', `can have at most ${max} characters`)] : [];
}

/**
 * core/v1 Event validation. Old-style events (no eventTime) must name the involved object's namespace
 * as their own; new-style events (eventTime set) must also say who reported them and why.
 */
export function validateEvent(event: Event, old?: Event): StatusCause[] {
  const causes = validateObjectMeta(event.metadata, { namespaced: true, name: nameIsDNSSubdomain });
  const namespace = event.metadata?.namespace ?? '';
  const involvedNamespace = event.involvedObject?.namespace ?? '';
  const mismatch = () => invalid('involvedObject.namespace', involvedNamespace, 'does not match event.namespace');
  if (!event.eventTime) {
    if (involvedNamespace ? namespace !== involvedNamespace : namespace !== '' && namespace !== 'default') causes.push(mismatch());
  } else {
    if (!involvedNamespace && namespace !== 'default' && namespace !== 'kube-system') causes.push(mismatch());
    if (!event.reportingComponent) causes.push(required('reportingComponent'));
    causes.push(...validateQualifiedName(event.reportingComponent ?? '', 'reportingComponent'));
    if (!event.reportingInstance) causes.push(required('reportingInstance'));
    causes.push(...limit(event.reportingInstance, REPORTING_INSTANCE_LIMIT, 'reportingInstance'));
    const action = (event as { action?: string }).action;
    if (!action) causes.push(required('action'));
    causes.push(...limit(action, ACTION_LIMIT, 'action'));
    if (!event.reason) causes.push(required('reason'));
    causes.push(...limit(event.reason, REASON_LIMIT, 'reason'));
    causes.push(...limit(event.message, NOTE_LIMIT, 'message'));
  }
  causes.push(...isDNS1123Subdomain(namespace).map((message) => invalid('namespace', namespace, message)));
  if (old) causes.push(...validateObjectMetaUpdate(event.metadata, old.metadata));
  return causes;
}
