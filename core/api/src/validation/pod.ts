import type { ObjectMeta, Pod, PodSpec, PodTemplateSpec, StatusCause } from '../types.js';
import { validateContainers, validateInitContainers } from './containers.js';
import { child, duplicate, forbidden, inclusiveRange, index, invalid, notSupported, required } from './field.js';
import { validateAnnotations, validateLabels, validateObjectMeta } from './meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, nameIsDNSSubdomain } from './names.js';
import { validateTolerations } from './tolerations.js';
import { validateVolumes } from './volumes.js';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'];
const PREEMPTION_POLICIES = ['Never', 'PreemptLowerPriority'];
const MAX_INT32 = 2147483647;

function validateEnum(value: string | undefined, allowed: string[], field: string): StatusCause[] {
  if (!value) return [required(field)];
  return allowed.includes(value) ? [] : [notSupported(field, value, allowed)];
}

function validateSubdomainField(value: unknown, field: string): StatusCause[] {
  if (typeof value !== 'string' || value === '') return [];
  return isDNS1123Subdomain(value).map((message) => invalid(field, value, message));
}

function validateLabelField(value: unknown, field: string): StatusCause[] {
  if (typeof value !== 'string' || value === '') return [];
  return isDNS1123Label(value).map((message) => invalid(field, value, message));
}

/**
 * With host networking a pod's host ports are its container ports. A template may leave them 0: the pods made
 * from it get them filled in by the pod defaults.
 */
function validateHostNetworkPorts(spec: PodSpec, field: string, isPod: boolean): StatusCause[] {
  if (!spec.hostNetwork) return [];
  const causes: StatusCause[] = [];
  (spec.containers ?? []).forEach((container, i) => {
    (container.ports ?? []).forEach((port, j) => {
      const hostPort = port.hostPort ?? 0;
      if (hostPort !== port.containerPort && (isPod || hostPort !== 0)) {
        const path = child(index(child(index(child(field, 'containers'), i), 'ports'), j), 'hostPort');
        causes.push(invalid(path, port.hostPort ?? 0, 'must match `containerPort` when `hostNetwork` is true'));
      }
    });
  });
  return causes;
}

function validateNamedList(items: unknown, itemField: string, field: string): StatusCause[] {
  if (!Array.isArray(items)) return [];
  const causes: StatusCause[] = [];
  items.forEach((item: Record<string, unknown>, i) => {
    const value = typeof item?.[itemField] === 'string' ? (item[itemField] as string) : '';
    const path = child(index(field, i), itemField);
    if (!value) causes.push(required(path));
    else causes.push(...isQualifiedName(value).map((message) => invalid(path, value, message)));
  });
  return causes;
}

/** The longest sysctl name, and the form of one: dot- or slash-separated segments (sysctl.d(5)). */
const SYSCTL_MAX_LENGTH = 253;
const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
/** The pattern as upstream's message prints it. */
const SYSCTL_NAME_TEXT = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';

/** validateSysctls: each name present, well formed and given once. */
function validateSysctls(sysctls: { name?: string }[] | undefined, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  (sysctls ?? []).forEach((sysctl, i) => {
    const name = sysctl?.name ?? '';
    const at = child(index(field, i), 'name');
    if (!name) causes.push(required(at));
    else if (name.length > SYSCTL_MAX_LENGTH || !SYSCTL_NAME.test(name))
      causes.push(invalid(at, name, `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_NAME_TEXT}`));
    else if (seen.has(name)) causes.push(duplicate(at, name));
    seen.add(name);
  });
  return causes;
}

/** ValidatePodSpec: everything a pod spec must satisfy, in a pod or (isPod false) in a template. */
export function validatePodSpec(spec: PodSpec | undefined, field = 'spec', isPod = true): StatusCause[] {
  const s: PodSpec = spec ?? { containers: [] };
  const volumes = validateVolumes(s.volumes, child(field, 'volumes'));
  const causes = [...volumes.causes];
  causes.push(...validateContainers(s.containers, volumes.names, child(field, 'containers')));
  causes.push(...validateInitContainers(s.initContainers, s.containers, volumes.names, child(field, 'initContainers')));
  causes.push(...validateHostNetworkPorts(s, field, isPod));
  causes.push(...validateEnum(s.restartPolicy, RESTART_POLICIES, child(field, 'restartPolicy')));
  causes.push(...validateEnum(s.dnsPolicy, DNS_POLICIES, child(field, 'dnsPolicy')));
  causes.push(...validateLabels(s.nodeSelector, child(field, 'nodeSelector')));
  if (Array.isArray(s.imagePullSecrets)) {
    s.imagePullSecrets.forEach((secret: { name?: string }, i) => {
      if (!secret?.name) causes.push(required(child(index(child(field, 'imagePullSecrets'), i), 'name')));
    });
  }
  causes.push(...validateNamedList(s.readinessGates, 'conditionType', child(field, 'readinessGates')));
  causes.push(...validateSubdomainField(s.serviceAccountName, child(field, 'serviceAccountName')));
  causes.push(...validateSubdomainField(s.nodeName, child(field, 'nodeName')));
  causes.push(...validateSubdomainField(s.schedulerName, child(field, 'schedulerName')));
  const deadline = s.activeDeadlineSeconds;
  if (typeof deadline === 'number' && (deadline < 1 || deadline > MAX_INT32)) {
    causes.push(invalid(child(field, 'activeDeadlineSeconds'), deadline, inclusiveRange(1, MAX_INT32)));
  }
  causes.push(...validateLabelField(s.hostname, child(field, 'hostname')));
  causes.push(...validateLabelField(s.subdomain, child(field, 'subdomain')));
  causes.push(...validateTolerations(s.tolerations, child(field, 'tolerations')));
  causes.push(...validateSubdomainField(s.priorityClassName, child(field, 'priorityClassName')));
  causes.push(...validateSubdomainField(s.runtimeClassName, child(field, 'runtimeClassName')));
  if (typeof s.preemptionPolicy === 'string') causes.push(...validateEnum(s.preemptionPolicy, PREEMPTION_POLICIES, child(field, 'preemptionPolicy')));
  causes.push(...validateNamedList(s.schedulingGates, 'name', child(field, 'schedulingGates')));
  causes.push(...validateSysctls(s.securityContext?.sysctls, child(field, 'securityContext', 'sysctls')));
  return causes;
}

/** ValidatePodTemplateSpec: note that Kubernetes reports template labels at `<path>.labels`. */
export function validatePodTemplateSpec(template: PodTemplateSpec | undefined, field: string): StatusCause[] {
  const meta: ObjectMeta = template?.metadata ?? {};
  const causes = [
    ...validateLabels(meta.labels, child(field, 'labels')),
    ...validateAnnotations(meta.annotations, child(field, 'annotations')),
    ...validatePodSpec(template?.spec, child(field, 'spec'), false),
  ];
  if (Array.isArray(template?.spec?.ephemeralContainers) && template.spec.ephemeralContainers.length > 0) {
    causes.push(forbidden(child(field, 'spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }
  return causes;
}

function validateImageWhitespace(spec: PodSpec): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const list of ['containers', 'initContainers'] as const) {
    (spec[list] ?? []).forEach((container, i) => {
      const image = container.image ?? '';
      if (image.trim() !== image) causes.push(invalid(child(index(child('spec', list), i), 'image'), image, 'must not have leading or trailing whitespace'));
    });
  }
  return causes;
}

/** The checks shared by pod create and update: metadata and spec. */
export function validatePodMetadataAndSpec(pod: Pod): StatusCause[] {
  return [
    ...validateObjectMeta(pod.metadata, { namespaced: true, name: nameIsDNSSubdomain }),
    ...validatePodSpec(pod.spec),
    ...validateImageWhitespace(pod.spec ?? { containers: [] }),
  ];
}

/** ValidatePodCreate. */
export function validatePodCreate(pod: Pod): StatusCause[] {
  const causes = validatePodMetadataAndSpec(pod);
  const spec = pod.spec ?? { containers: [] };
  if (Array.isArray(spec.ephemeralContainers) && spec.ephemeralContainers.length > 0) {
    causes.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  }
  if (spec.nodeName && Array.isArray(spec.schedulingGates) && spec.schedulingGates.length > 0) {
    causes.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  }
  return causes;
}
