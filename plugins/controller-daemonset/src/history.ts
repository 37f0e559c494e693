import { isJsonObject, type ControllerRevision, type DaemonSet, type Pod } from '@skiff/api';
import { canonicalJson } from '@skiff/controller-manager';
import { goJson } from './go-json.js';
import { CONTROLLER_REVISION_HASH_LABEL } from './names.js';

const POD_TEMPLATE_SPEC = 'k8s.io.api.core.v1.PodTemplateSpec';

/**
 * What a DaemonSet's ControllerRevision holds: a strategic merge patch that replaces `spec.template` —
 * the form `kubectl rollout undo` sends back to the DaemonSet as it is. Its JSON text is the very text
 * kube-controller-manager writes (the template as Go writes it, keys sorted), because clients such as
 * upstream's e2e tests find a DaemonSet's current revision by comparing those bytes.
 */
export function templatePatch(ds: DaemonSet): { spec: { template: Record<string, unknown> } } {
  return { spec: { template: withReplaceDirective(goJson(POD_TEMPLATE_SPEC, ds.spec.template)) } };
}

/**
 * Whether a revision records the DaemonSet's current template. The revision's template is read as Go
 * would read it, so revisions written before their text followed Go's (no `creationTimestamp: null`)
 * still match.
 */
export function revisionMatches(ds: DaemonSet, revision: ControllerRevision): boolean {
  return canonicalJson(normalizedData(revision.data)) === canonicalJson(templatePatch(ds));
}

function normalizedData(data: unknown): unknown {
  if (!isJsonObject(data) || !isJsonObject(data.spec) || !isJsonObject(data.spec.template)) return data;
  const { $patch, ...template } = data.spec.template;
  if ($patch !== 'replace') return data;
  return { ...{}, ...data, spec: { ...{}, ...data.spec, template: withReplaceDirective(goJson(POD_TEMPLATE_SPEC, template)) } };
}

/** `$patch` sorts before every field name, so it comes first, as in a Go map. */
function withReplaceDirective(template: unknown): Record<string, unknown> {
  return { $patch: 'replace', ...(template as Record<string, unknown>) };
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
