import type { ControllerRevision, DaemonSet, Pod } from '@skiff/api';
import { canonicalJson } from '@skiff/controller-manager';
import { CONTROLLER_REVISION_HASH_LABEL } from './names.js';

/**
 * What a DaemonSet's ControllerRevision holds: a strategic merge patch that replaces `spec.template` —
 * the form `kubectl rollout undo` sends back to the DaemonSet as it is.
 */
export function templatePatch(ds: DaemonSet): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: { ...structuredClone(ds.spec.template), $patch: 'replace' } } };
}

/** Whether a revision records the DaemonSet's current template. */
export function revisionMatches(ds: DaemonSet, revision: ControllerRevision): boolean {
  return canonicalJson(revision.data) === canonicalJson(templatePatch(ds));
}

export function maxRevision(revisions: readonly ControllerRevision[]): number {
  return revisions.reduce((max, revision) => Math.max(max, revision.revision ?? 0), 0);
}

/** The DaemonSet's revisions split into the one(s) recording its current template and the others. */
export function splitRevisions(ds: DaemonSet, revisions: readonly ControllerRevision[]): { current: ControllerRevision[]; old: ControllerRevision[] } {
  const current: ControllerRevision[] = [];
  const old: ControllerRevision[] = [];
  for (const revision of revisions) (revisionMatches(ds, revision) ? current : old).push(revision);
  return { current, old };
}

/**
 * Old revisions beyond `revisionHistoryLimit` (default 10), lowest revision first, that can go: a revision
 * some pod of the DaemonSet still runs is kept whatever the limit.
 */
export function revisionsToCleanUp(ds: DaemonSet, old: readonly ControllerRevision[], pods: readonly Pod[]): ControllerRevision[] {
  const surplus = old.length - (ds.spec.revisionHistoryLimit ?? 10);
  if (surplus <= 0) return [];
  const live = new Set(pods.map((pod) => pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]).filter(Boolean));
  return [...old]
    .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))
    .filter((revision) => !live.has(revision.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? revision.metadata.name))
    .slice(0, surplus);
}
