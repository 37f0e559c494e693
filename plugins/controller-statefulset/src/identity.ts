import type { OwnerReference, Pod, StatefulSet, Volume } from '@skiff/api';
import { LABEL } from './names.js';

/** `<parent>-<ordinal>`: the greedy parent part lets StatefulSet names contain dashes and digits. */
const MEMBER_NAME = /^(.*)-([0-9]+)$/;
const MAX_ORDINAL = 2 ** 31 - 1;

/** The StatefulSet name and ordinal a pod's name encodes; ordinal -1 when it encodes none. */
export function parseMemberName(name: string | undefined): { parent: string; ordinal: number } {
  const match = MEMBER_NAME.exec(name ?? '');
  if (!match) return { parent: '', ordinal: -1 };
  const ordinal = Number(match[2]);
  return { parent: match[1]!, ordinal: ordinal <= MAX_ORDINAL ? ordinal : -1 };
}

export function ordinalOf(pod: Pod): number {
  return parseMemberName(pod.metadata.name).ordinal;
}

/** Whether a pod's name makes it one of the set's members (whatever its ordinal). */
export function isMemberOf(set: StatefulSet, pod: Pod): boolean {
  return parseMemberName(pod.metadata.name).parent === set.metadata.name;
}

export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata.name}-${ordinal}`;
}

export function claimName(set: StatefulSet, templateName: string, ordinal: number): string {
  return `${templateName}-${set.metadata.name}-${ordinal}`;
}

export function replicasOf(set: StatefulSet): number {
  return set.spec.replicas ?? 1;
}

/** The first ordinal of the set (`spec.ordinals.start`, 0 by default). */
export function startOrdinal(set: StatefulSet): number {
  return set.spec.ordinals?.start ?? 0;
}

/** The last ordinal the set keeps, inclusive; below startOrdinal when it has no replicas. */
export function endOrdinal(set: StatefulSet): number {
  return startOrdinal(set) + replicasOf(set) - 1;
}

export function inOrdinalRange(set: StatefulSet, pod: Pod): boolean {
  const ordinal = ordinalOf(pod);
  return ordinal >= startOrdinal(set) && ordinal <= endOrdinal(set);
}

export function revisionOf(pod: Pod): string {
  return pod.metadata.labels?.[LABEL.REVISION] ?? '';
}

function volumesOf(pod: Pod): Volume[] {
  return pod.spec.volumes ?? [];
}

/** Name, namespace and identity labels as the set gives them; hostname and subdomain are fixed at creation. */
export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const { parent, ordinal } = parseMemberName(pod.metadata.name);
  return (
    ordinal >= 0 &&
    parent === set.metadata.name &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[LABEL.POD_NAME] === pod.metadata.name &&
    pod.metadata.labels?.[LABEL.POD_INDEX] === String(ordinal)
  );
}

/** Whether the pod mounts each of the set's claim templates under the template's name, from its own claim. */
export function storageMatches(set: StatefulSet, pod: Pod): boolean {
  const ordinal = ordinalOf(pod);
  if (ordinal < 0) return false;
  const volumes = new Map(volumesOf(pod).map((volume) => [volume.name, volume]));
  return (set.spec.volumeClaimTemplates ?? []).every(
    (template) => volumes.get(template.metadata.name!)?.persistentVolumeClaim?.claimName === claimName(set, template.metadata.name!, ordinal),
  );
}

/** Sets the identity labels of a pod the caller owns (a copy). */
export function updateIdentity(set: StatefulSet, pod: Pod): void {
  const ordinal = ordinalOf(pod);
  pod.metadata.namespace = set.metadata.namespace;
  pod.metadata.labels = { ...{}, ...pod.metadata.labels, [LABEL.POD_NAME]: pod.metadata.name!, [LABEL.POD_INDEX]: String(ordinal) };
}

/**
 * Points a pod the caller owns at its claims: one volume per claim template, named after the template,
 * replacing any template volume of that name; the template's other volumes follow.
 */
export function updateStorage(set: StatefulSet, pod: Pod): void {
  const templates = set.spec.volumeClaimTemplates ?? [];
  if (templates.length === 0) return;
  const ordinal = ordinalOf(pod);
  const claimed = new Set(templates.map((template) => template.metadata.name!));
  const claimVolumes: Volume[] = templates.map((template) => ({
    name: template.metadata.name!,
    persistentVolumeClaim: { claimName: claimName(set, template.metadata.name!, ordinal) },
  }));
  pod.spec.volumes = [...claimVolumes, ...volumesOf(pod).filter((volume) => !claimed.has(volume.name))];
}

/**
 * The pod the set runs at `ordinal`, from `set`'s template (the caller passes the set as of the wanted
 * revision), labelled with `revision`: name `<set>-<ordinal>`, hostname the same, subdomain the governing
 * Service, identity labels, one volume per claim template.
 */
export function newMemberPod(set: StatefulSet, ordinal: number, revision: string, controllerRef: OwnerReference): Pod {
  const template = set.spec.template;
  const name = podName(set, ordinal);
  const metadata: Pod['metadata'] = {
    name,
    generateName: `${set.metadata.name}-`,
    namespace: set.metadata.namespace,
    labels: { ...template.metadata?.labels },
    ownerReferences: [controllerRef],
  };
  if (template.metadata?.annotations) metadata.annotations = structuredClone(template.metadata.annotations);
  if (template.metadata?.finalizers) metadata.finalizers = structuredClone(template.metadata.finalizers);
  const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata, spec: structuredClone(template.spec) };
  updateIdentity(set, pod);
  pod.spec.hostname = name;
  if (set.spec.serviceName) pod.spec.subdomain = set.spec.serviceName;
  updateStorage(set, pod);
  pod.metadata.labels![LABEL.REVISION] = revision;
  return pod;
}
