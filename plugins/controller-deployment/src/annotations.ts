import type { Deployment, ReplicaSet } from '@skiff/api';
import { ANNOTATION } from './names.js';
import { maxSurge } from './rolling.js';
import { desiredReplicas } from './spec.js';

/** Longest revision-history annotation kept; the oldest entries are dropped first. */
const MAX_REVISION_HISTORY_CHARS = 2000;

/** Deployment annotations that describe the Deployment itself and are not copied to its ReplicaSets. */
const NOT_COPIED = new Set<string>([
  ANNOTATION.LAST_APPLIED,
  ANNOTATION.REVISION,
  ANNOTATION.REVISION_HISTORY,
  ANNOTATION.DESIRED_REPLICAS,
  ANNOTATION.MAX_REPLICAS,
  ANNOTATION.ROLLBACK_TO,
]);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A revision annotation read as kube-controller-manager reads it, a decimal int64; undefined when it is
 * not one. Revisions are bigints: they may be any int64, beyond what a number holds exactly.
 */
export function parseRevision(value: string | undefined): bigint | undefined {
  if (value === undefined || !/^[+-]?\d+$/.test(value)) return undefined;
  const revision = BigInt(value);
  return revision < INT64_MIN || revision > INT64_MAX ? undefined : revision;
}

/** The revision a ReplicaSet carries; 0 when it has none (or an unreadable one). */
export function revisionOf(rs: ReplicaSet): bigint {
  return parseRevision(rs.metadata.annotations?.[ANNOTATION.REVISION]) ?? 0n;
}

export function maxRevision(replicaSets: readonly ReplicaSet[]): bigint {
  return replicaSets.reduce((max, rs) => {
    const revision = revisionOf(rs);
    return revision > max ? revision : max;
  }, 0n);
}

/** Orders ReplicaSets by revision, lowest first. */
export function compareRevisions(a: ReplicaSet, b: ReplicaSet): number {
  const revisionA = revisionOf(a);
  const revisionB = revisionOf(b);
  if (revisionA === revisionB) return 0;
  return revisionA < revisionB ? -1 : 1;
}

// The functions below update a ReplicaSet the caller has copied, and say whether anything changed.

/** Copies the Deployment's own annotations (kubernetes.io/change-cause and the like) to the ReplicaSet. */
export function copyDeploymentAnnotations(d: Deployment, rs: ReplicaSet): boolean {
  let changed = false;
  for (const [key, value] of Object.entries(d.metadata.annotations ?? {})) {
    if (NOT_COPIED.has(key) || rs.metadata.annotations?.[key] === value) continue;
    rs.metadata.annotations = { ...{}, ...rs.metadata.annotations, [key]: value };
    changed = true;
  }
  return changed;
}

/** Records the Deployment size (and size plus surge) this ReplicaSet was last scaled for. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  const annotations = rs.metadata.annotations ?? {};
  if (annotations[ANNOTATION.DESIRED_REPLICAS] === String(desired) && annotations[ANNOTATION.MAX_REPLICAS] === String(max)) return false;
  rs.metadata.annotations = { ...{}, ...annotations, [ANNOTATION.DESIRED_REPLICAS]: String(desired), [ANNOTATION.MAX_REPLICAS]: String(max) };
  return true;
}

/** setReplicasAnnotations for the Deployment as it is now. */
export function setReplicasAnnotationsFor(d: Deployment, rs: ReplicaSet): boolean {
  return setReplicasAnnotations(rs, desiredReplicas(d), desiredReplicas(d) + maxSurge(d));
}

/**
 * Annotations of the Deployment's current ReplicaSet: its annotations copied over, the revision raised
 * to `newRevision` if it is lower (a rollback back to this template makes it the newest again, and the
 * revision it had is kept in the revision history), and, for one about to be created, the replica
 * annotations. A revision that is there but no number is left as it is.
 */
export function setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: bigint, exists: boolean): boolean {
  let changed = copyDeploymentAnnotations(d, rs);
  const previous = rs.metadata.annotations?.[ANNOTATION.REVISION];
  const current = previous ? parseRevision(previous) : 0n;
  if (current !== undefined && current < newRevision) {
    const annotations: Record<string, string> = { ...{}, ...rs.metadata.annotations, [ANNOTATION.REVISION]: String(newRevision) };
    if (previous) {
      const history = annotations[ANNOTATION.REVISION_HISTORY];
      annotations[ANNOTATION.REVISION_HISTORY] = appendRevisionHistory(history ? history.split(',') : [], previous);
    }
    rs.metadata.annotations = annotations;
    changed = true;
  }
  if (!exists && setReplicasAnnotationsFor(d, rs)) changed = true;
  return changed;
}

function appendRevisionHistory(history: string[], revision: string): string {
  const entries = [...history, revision];
  while (entries.length > 1 && entries.join(',').length > MAX_REVISION_HISTORY_CHARS) entries.shift();
  return entries.join(',');
}
