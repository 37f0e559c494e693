import { RESOURCES, type OwnerReference, type PersistentVolumeClaim, type Pod, type StatefulSet } from '@skiff/api';
import { newControllerRef } from '@skiff/controller-manager';
import { claimName, inOrdinalRange, ordinalOf } from './identity.js';

/** What the controller reads claims from: its informer's cache, keyed `namespace/name`. */
export type ClaimLookup = (namespace: string, name: string) => PersistentVolumeClaim | undefined;

export interface RetentionPolicy {
  whenDeleted: 'Retain' | 'Delete';
  whenScaled: 'Retain' | 'Delete';
}

export function retentionPolicy(set: StatefulSet): RetentionPolicy {
  const policy = set.spec.persistentVolumeClaimRetentionPolicy;
  return { whenDeleted: policy?.whenDeleted === 'Delete' ? 'Delete' : 'Retain', whenScaled: policy?.whenScaled === 'Delete' ? 'Delete' : 'Retain' };
}

/**
 * The claims a member pod needs, one per claim template: named `<template>-<set>-<ordinal>`, in the set's
 * namespace, with the template's labels plus the set's matchLabels, no owner references yet.
 */
export function claimsFor(set: StatefulSet, pod: Pod): PersistentVolumeClaim[] {
  const ordinal = ordinalOf(pod);
  return (set.spec.volumeClaimTemplates ?? []).map((template) => {
    const claim = structuredClone(template);
    delete claim.status;
    claim.apiVersion = 'v1';
    claim.kind = 'PersistentVolumeClaim';
    claim.metadata = {
      ...{},
      ...claim.metadata,
      name: claimName(set, template.metadata.name!, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...{}, ...template.metadata.labels, ...set.spec.selector.matchLabels },
    };
    return claim;
  });
}

/** The cached claims of a pod that exist, paired with what they should be called. */
export function existingClaims(set: StatefulSet, pod: Pod, lookup: ClaimLookup): PersistentVolumeClaim[] {
  return claimsFor(set, pod)
    .map((claim) => lookup(set.metadata.namespace!, claim.metadata.name!))
    .filter((claim): claim is PersistentVolumeClaim => claim !== undefined);
}

export function missingClaims(set: StatefulSet, pod: Pod, lookup: ClaimLookup): PersistentVolumeClaim[] {
  return claimsFor(set, pod).filter((claim) => !lookup(set.metadata.namespace!, claim.metadata.name!));
}

/** A reference to `owner` by kind and name (any uid). */
function refersTo(ref: OwnerReference, kind: string, apiVersion: string, name: string | undefined): boolean {
  return ref.kind === kind && ref.apiVersion === apiVersion && ref.name === name;
}

function refersToSet(ref: OwnerReference, set: StatefulSet): boolean {
  return refersTo(ref, RESOURCES.statefulsets.kind, 'apps/v1', set.metadata.name);
}

function refersToPod(ref: OwnerReference, pod: Pod): boolean {
  return refersTo(ref, RESOURCES.pods.kind, 'v1', pod.metadata.name);
}

function hasOwner(claim: PersistentVolumeClaim, uid: string | undefined): boolean {
  return uid !== undefined && (claim.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid);
}

/**
 * A claim still owned by an earlier pod of the same name (or an earlier set): the garbage collector is
 * about to delete it, so a new pod must not start on it.
 */
export function hasStaleOwner(claim: PersistentVolumeClaim, owner: StatefulSet | Pod, kind: 'set' | 'pod'): boolean {
  const [ownerKind, apiVersion] = kind === 'set' ? [RESOURCES.statefulsets.kind, 'apps/v1'] : [RESOURCES.pods.kind, 'v1'];
  const ref = (claim.metadata.ownerReferences ?? []).find((candidate) => refersTo(candidate, ownerKind, apiVersion, owner.metadata.name));
  return ref !== undefined && ref.uid !== owner.metadata.uid;
}

/** With a Delete policy, a claim controlled by something other than this set or pod is left to that controller. */
export function hasUnexpectedController(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): boolean {
  const policy = retentionPolicy(set);
  if (policy.whenDeleted === 'Retain' && policy.whenScaled === 'Retain') return false;
  return (claim.metadata.ownerReferences ?? []).some((ref) => {
    if (refersToSet(ref, set)) return ref.uid !== set.metadata.uid;
    if (refersToPod(ref, pod)) return ref.uid !== pod.metadata.uid;
    return ref.controller === true;
  });
}

/** The set or pod owns the claim without being its controller: an older form of the references to redo. */
function hasNonControllerOwner(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): boolean {
  return (claim.metadata.ownerReferences ?? []).some(
    (ref) => (ref.uid === set.metadata.uid || (pod.metadata.uid !== undefined && ref.uid === pod.metadata.uid)) && ref.controller !== true,
  );
}

/**
 * Which of set and pod should own a claim under the retention policy: the set when claims go with the set
 * (whenDeleted: Delete) and the pod is in range; the pod when claims go with scaled-down pods
 * (whenScaled: Delete) and the pod is out of range.
 */
export function wantedOwners(set: StatefulSet, pod: Pod): { set: boolean; pod: boolean } {
  const policy = retentionPolicy(set);
  const scaledDown = !inOrdinalRange(set, pod);
  return {
    set: policy.whenDeleted === 'Delete' && (policy.whenScaled === 'Retain' || !scaledDown),
    pod: policy.whenScaled === 'Delete' && scaledDown,
  };
}

/** Whether a claim's owner references already say what the retention policy asks. */
export function claimOwnersUpToDate(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): boolean {
  // References to an earlier set or pod of the same name: the garbage collector's business, not ours.
  if (hasStaleOwner(claim, set, 'set') || hasStaleOwner(claim, pod, 'pod')) return true;
  if (hasUnexpectedController(claim, set, pod)) return !hasOwner(claim, set.metadata.uid) && !hasOwner(claim, pod.metadata.uid);
  if (hasNonControllerOwner(claim, set, pod)) return false;
  const wanted = wantedOwners(set, pod);
  return hasOwner(claim, set.metadata.uid) === wanted.set && hasOwner(claim, pod.metadata.uid) === wanted.pod;
}

/**
 * The owner references a claim should carry: every reference to this set and pod removed, then the
 * wanted ones added back as controller references — none when another controller owns the claim.
 */
export function claimOwnerReferences(claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): OwnerReference[] {
  const unexpected = hasUnexpectedController(claim, set, pod);
  const refs = (claim.metadata.ownerReferences ?? []).filter((ref) => !refersToSet(ref, set) && !refersToPod(ref, pod));
  if (unexpected) return refs;
  const wanted = wantedOwners(set, pod);
  if (wanted.set) refs.push(newControllerRef(set, RESOURCES.statefulsets));
  if (wanted.pod && pod.metadata.uid) refs.push(newControllerRef(pod, RESOURCES.pods));
  return refs;
}

/** Whether every existing claim of the pod carries the owner references the retention policy asks for. */
export function claimsMatchRetention(set: StatefulSet, pod: Pod, lookup: ClaimLookup): boolean {
  return existingClaims(set, pod, lookup).every((claim) => claimOwnersUpToDate(claim, set, pod));
}

/** With whenScaled: Delete, a claim still owned by an earlier pod of this name blocks creating the pod. */
export function podClaimIsStale(set: StatefulSet, pod: Pod, lookup: ClaimLookup): boolean {
  if (retentionPolicy(set).whenScaled === 'Retain') return false;
  return existingClaims(set, pod, lookup).some((claim) => hasStaleOwner(claim, pod, 'pod'));
}
