import { RESOURCES, type ControllerRevision, type PodTemplateSpec, type StatefulSet } from '@skiff/api';
import { canonicalJson, newControllerRef, templateHash } from '@skiff/controller-manager';
import { LABEL } from './names.js';

/** Longest name prefix a revision keeps, leaving room for `-<hash>` in a 253-character name. */
const MAX_PREFIX_LENGTH = 223;

/**
 * What a StatefulSet revision records: a strategic merge patch that puts the template back as it was
 * (`$patch: replace`), which is also what `kubectl rollout undo` sends.
 */
export function revisionData(set: StatefulSet): { spec: { template: PodTemplateSpec & { $patch: 'replace' } } } {
  return { spec: { template: { ...{}, ...structuredClone(set.spec.template), $patch: 'replace' } } };
}

export function revisionName(set: StatefulSet, hash: string): string {
  return `${set.metadata.name!.slice(0, MAX_PREFIX_LENGTH)}-${hash}`;
}

/**
 * The ControllerRevision for the set's template as revision number `revision`: named `<set>-<hash>`, with
 * the template's labels and the hash label, the set's annotations, owned by the set.
 */
export function newRevision(set: StatefulSet, revision: number, collisionCount: number): ControllerRevision {
  const data = revisionData(set);
  const hash = templateHash(data, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(set, hash),
      namespace: set.metadata.namespace,
      labels: { ...{}, ...set.spec.template.metadata?.labels, [LABEL.REVISION_HASH]: hash },
      ...(set.metadata.annotations ? { annotations: { ...set.metadata.annotations } } : {}),
      ownerReferences: [newControllerRef(set, RESOURCES.statefulsets)],
    },
    data,
    revision,
  };
}

/**
 * Same recorded template. Only the data counts: the hash label differs between two revisions of one
 * template made under different collision counts.
 */
export function equalRevisions(a: ControllerRevision, b: ControllerRevision): boolean {
  return canonicalJson(a.data) === canonicalJson(b.data);
}

/** Oldest first: by revision number, then creation time, then name. */
export function sortRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort(
    (a, b) =>
      a.revision - b.revision ||
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
}

/** One more than the highest revision number (1 for the first). Expects revisions sorted. */
export function nextRevisionNumber(sorted: readonly ControllerRevision[]): number {
  return sorted.length === 0 ? 1 : sorted[sorted.length - 1]!.revision + 1;
}

/** The set with its template as recorded in `revision`. */
export function applyRevision(set: StatefulSet, revision: ControllerRevision): StatefulSet {
  const recorded = (revision.data as { spec?: { template?: PodTemplateSpec & { $patch?: string } } } | undefined)?.spec?.template;
  if (!recorded) return set;
  const { $patch: _directive, ...template } = structuredClone(recorded);
  return { ...{}, ...set, spec: { ...{}, ...set.spec, template } };
}

/**
 * Revisions beyond `revisionHistoryLimit` to delete, oldest first. Live ones never go: the current and
 * update revisions and every revision a pod still runs. Expects revisions sorted.
 */
export function revisionsToTruncate(sorted: readonly ControllerRevision[], live: ReadonlySet<string>, limit: number): ControllerRevision[] {
  const history = sorted.filter((revision) => !live.has(revision.metadata.name!));
  if (limit < 0 || history.length <= limit) return [];
  return history.slice(0, history.length - limit);
}
