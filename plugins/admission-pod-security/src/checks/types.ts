import type { Container, EphemeralContainer, ObjectMeta, PodSpec } from '@skiff/api';
import type { Level } from '../policy.js';

/** What a check reads: the pod's (or template's) metadata and spec. */
export interface PodView {
  metadata: ObjectMeta;
  spec: PodSpec;
}

/** Why a check refuses a pod: a short reason, always printed, and the detail that names what to fix. */
export interface Violation {
  reason: string;
  detail: string;
}

/** Undefined when the pod passes. */
export type PodCheck = (pod: PodView) => Violation | undefined;

/** One revision of a check, applying from policy version 1.`since` until the next revision. */
export interface CheckRevision {
  since: number;
  check: PodCheck;
  /** Baseline checks a restricted one replaces while this revision applies. */
  overrides?: readonly string[];
}

export interface CheckDefinition {
  /** Unique; checks run in id order, baseline ones first, so messages list violations in a stable order. */
  id: string;
  level: Exclude<Level, 'privileged'>;
  /** Oldest first. */
  revisions: readonly CheckRevision[];
}

/** Every container the kubelet may run for the pod: init containers, containers, then ephemeral containers. */
export function allContainers(spec: PodSpec): (Container | EphemeralContainer)[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

/** Names of the containers `matches` picks, in allContainers order. */
export const namesOf = (spec: PodSpec, matches: (container: Container | EphemeralContainer) => boolean): string[] =>
  allContainers(spec)
    .filter(matches)
    .map((container) => container.name);

/** A pod in a user namespace (`hostUsers: false`), for which some checks relax from 1.35. */
export const inUserNamespace = (spec: PodSpec): boolean => spec.hostUsers === false;

/** A pod that declares itself a Windows pod (`spec.os.name: windows`), which Linux-only rules skip from 1.25. */
export const isWindows = (spec: PodSpec): boolean => spec.os?.name === 'windows';

/** A check that passes user-namespaced pods, and otherwise runs `check`. */
export const exceptUserNamespaced =
  (check: PodCheck): PodCheck =>
  (pod) =>
    inUserNamespace(pod.spec) ? undefined : check(pod);

/** A check that passes Windows pods, and otherwise runs `check`. */
export const exceptWindows =
  (check: PodCheck): PodCheck =>
  (pod) =>
    isWindows(pod.spec) ? undefined : check(pod);
