// A running pod's spec is immutable except for a few fields (ValidatePodUpdate).
import type { Container, Pod, PodSpec, StatusCause, Toleration } from '../types.js';
import { semanticEqual } from './equality.js';
import { child, forbidden, inclusiveRange, index, invalid, required } from './field.js';
import { validateObjectMetaUpdate } from './meta.js';
import { validateEphemeralContainers } from './containers.js';
import { validatePodCreate, validatePodMetadataAndSpec } from './pod.js';

const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

/** The message Kubernetes answers a forbidden pod spec change with. */
export const POD_UPDATE_FORBIDDEN_MESSAGE = `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}`;

const MAX_INT32 = 2147483647;

/** Same number of containers, each with an image; returns `stop` when containers were added or removed. */
function validateContainerUpdates(next: Container[] | undefined, old: Container[] | undefined, field: string): { causes: StatusCause[]; stop: boolean } {
  if ((next ?? []).length !== (old ?? []).length) return { causes: [forbidden(field, 'pod updates may not add or remove containers')], stop: true };
  const causes: StatusCause[] = [];
  (next ?? []).forEach((container, i) => {
    const image = container.image ?? '';
    if (!image) causes.push(required(child(index(field, i), 'image')));
    if (image.trim() !== image) causes.push(invalid(child(index(field, i), 'image'), image, 'must not have leading or trailing whitespace'));
  });
  return { causes, stop: false };
}

/** activeDeadlineSeconds may be set, or lowered, but never raised or removed. */
function validateActiveDeadlineUpdate(next: unknown, old: unknown): StatusCause[] {
  const field = 'spec.activeDeadlineSeconds';
  if (typeof next === 'number') {
    if (next < 0 || next > MAX_INT32) return [invalid(field, next, inclusiveRange(0, MAX_INT32))];
    if (typeof old === 'number' && old < next) return [invalid(field, next, 'must be less than or equal to previous value')];
    return [];
  }
  return typeof old === 'number' ? [invalid(field, undefined, 'must not update from a positive integer to nil value')] : [];
}

/** Existing tolerations stay (only their tolerationSeconds may change); new ones may be added. */
function validateOnlyAddedTolerations(next: Toleration[] | undefined, old: Toleration[] | undefined): StatusCause[] {
  for (const existing of old ?? []) {
    const kept = (next ?? []).some((candidate) => semanticEqual({ ...{}, ...existing, tolerationSeconds: candidate.tolerationSeconds }, candidate));
    if (!kept) return [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return [];
}

/** The new spec with every updatable field put back to its old value: what must equal the old spec. */
function withoutUpdatableChanges(next: PodSpec, old: PodSpec): PodSpec {
  const munged: PodSpec = structuredClone(next);
  const keepImages = (containers: Container[] | undefined, previous: Container[] | undefined) =>
    containers?.map((c, i) => ({ ...{}, ...c, image: previous?.[i]?.image }));
  munged.containers = keepImages(munged.containers, old.containers) ?? [];
  if (munged.initContainers) munged.initContainers = keepImages(munged.initContainers, old.initContainers);
  munged.activeDeadlineSeconds = old.activeDeadlineSeconds;
  munged.tolerations = old.tolerations;
  munged.schedulingGates = old.schedulingGates;
  const oldGrace = old.terminationGracePeriodSeconds;
  if (typeof oldGrace === 'number' && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldGrace;
  return munged;
}

/** Scheduling gates may only be removed. */
function validateOnlyDeletedSchedulingGates(next: unknown, old: unknown): StatusCause[] {
  const names = (gates: unknown) => (Array.isArray(gates) ? gates.map((g: { name?: string }) => g?.name ?? '') : []);
  const previous = new Set(names(old));
  const added = names(next).find((name) => !previous.has(name));
  return added === undefined ? [] : [forbidden('spec.schedulingGates', `only deletion is allowed, but found new scheduling gate '${added}'`)];
}

/** ValidatePodUpdate. */
export function validatePodUpdate(pod: Pod, old: Pod): StatusCause[] {
  const causes = [...validateObjectMetaUpdate(pod.metadata, old.metadata), ...validatePodMetadataAndSpec(pod)];
  const spec = pod.spec ?? { containers: [] };
  const oldSpec = old.spec ?? { containers: [] };
  for (const list of ['containers', 'initContainers'] as const) {
    const result = validateContainerUpdates(spec[list], oldSpec[list], child('spec', list));
    causes.push(...result.causes);
    if (result.stop) return causes;
  }
  const deadline = validateActiveDeadlineUpdate(spec.activeDeadlineSeconds, oldSpec.activeDeadlineSeconds);
  if (deadline.length) return [...causes, ...deadline];
  causes.push(...validateOnlyAddedTolerations(spec.tolerations, oldSpec.tolerations));
  causes.push(...validateOnlyDeletedSchedulingGates(spec.schedulingGates, oldSpec.schedulingGates));
  if (!semanticEqual(withoutUpdatableChanges(spec, oldSpec), oldSpec)) causes.push(forbidden('spec', POD_UPDATE_FORBIDDEN_MESSAGE));
  return causes;
}

/**
 * An update through pods/ephemeralcontainers: existing ephemeral containers stay as they are, new ones are
 * valid ephemeral containers (ValidatePodEphemeralContainersUpdate). The rest of the spec is the stored one.
 */
export function validatePodEphemeralContainersUpdate(pod: Pod, old: Pod): StatusCause[] {
  const causes = [...validateObjectMetaUpdate(pod.metadata, old.metadata)];
  const field = 'spec.ephemeralContainers';
  const next = pod.spec?.ephemeralContainers ?? [];
  const previous = old.spec?.ephemeralContainers ?? [];
  for (const existing of previous) {
    const i = next.findIndex((c) => c.name === existing.name);
    if (i < 0) causes.push(forbidden(field, `existing ephemeral containers "${existing.name}" may not be removed`));
    else if (!semanticEqual(next[i], existing)) causes.push(forbidden(index(field, i), `existing ephemeral containers "${existing.name}" may not be changed`));
  }
  if (causes.length) return causes;
  const kept = new Set(previous.map((c) => c.name));
  const others: Container[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []), ...previous];
  const volumes = new Set((pod.spec?.volumes ?? []).map((v) => v.name ?? ''));
  const added = next.map((c, i) => ({ c, i })).filter(({ c }) => !kept.has(c.name));
  for (const { c, i } of added) {
    causes.push(...validateEphemeralContainers([c], others, volumes, field).map((cause) => renumber(cause, field, i)));
    others.push(c);
  }
  return causes;
}

/** validateEphemeralContainers numbers its one container 0; the cause is moved to the container's real index. */
function renumber(cause: StatusCause, field: string, i: number): StatusCause {
  const from = `${field}[0]`;
  return cause.field?.startsWith(from)
    ? { ...{}, ...cause, field: `${field}[${i}]${cause.field.slice(from.length)}`, message: cause.message?.replace(from, `${field}[${i}]`) }
    : cause;
}

const RESIZABLE_RESOURCES = new Set(['cpu', 'memory']);

/** An update through pods/resize: only the cpu and memory of containers change; the rest of the spec is the stored one. */
export function validatePodResize(pod: Pod, old: Pod): StatusCause[] {
  const causes = [...validateObjectMetaUpdate(pod.metadata, old.metadata), ...validatePodMetadataAndSpec(pod)];
  (pod.spec?.containers ?? []).forEach((container, i) => {
    const before = old.spec?.containers?.[i];
    for (const part of ['requests', 'limits'] as const) {
      const next = container.resources?.[part] ?? {};
      const prev = before?.resources?.[part] ?? {};
      const changed = new Set([...Object.keys(next), ...Object.keys(prev)].filter((name) => !semanticEqual(next[name], prev[name])));
      const other = [...changed].find((name) => !RESIZABLE_RESOURCES.has(name));
      if (other !== undefined) causes.push(forbidden(child(index('spec.containers', i), 'resources', part), 'only cpu and memory resources are mutable'));
    }
  });
  return causes;
}

/** Pod create (no old object) or update, through the pod itself or one of its spec subresources. */
export function validatePod(pod: Pod, old?: Pod, subresource = ''): StatusCause[] {
  if (!old) return validatePodCreate(pod);
  if (subresource === 'ephemeralcontainers') return validatePodEphemeralContainersUpdate(pod, old);
  if (subresource === 'resize') return validatePodResize(pod, old);
  return validatePodUpdate(pod, old);
}
