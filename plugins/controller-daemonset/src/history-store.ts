import { isApiError, labelSelectorFromObject, RESOURCES, type ControllerRevision, type DaemonSet, type Pod } from '@skiff/api';
import { claimCandidates, controllerRefOf, ControllerRefManager, newControllerRef, templateHash } from '@skiff/controller-manager';
import type { ApiClient, Informer } from '@skiff/kernel';
import { DaemonSetError } from './errors.js';
import { maxRevision, revisionMatches, revisionsToCleanUp, splitRevisions, templatePatch } from './history.js';
import { CONTROLLER_REVISION_HASH_LABEL } from './names.js';

/**
 * A DaemonSet's ControllerRevisions: one per template it has had, named `<ds>-<hash>`, labelled with the
 * template's labels and `controller-revision-hash`, holding the template as `kubectl rollout undo`
 * applies it, numbered in the order the templates became current.
 */
export class RevisionHistory {
  constructor(
    private readonly client: ApiClient,
    private readonly revisions: Informer<ControllerRevision>,
  ) {}

  /**
   * Claims the DaemonSet's revisions and makes sure the current template has one with the highest number:
   * an earlier revision coming back (a rollback) is renumbered, a new template gets a new revision, and
   * duplicates of the current one are merged into the newest.
   */
  async construct(ds: DaemonSet): Promise<{ current: ControllerRevision; old: ControllerRevision[] }> {
    const claimed = await this.claim(ds);
    const labelled = await Promise.all(claimed.map((revision) => this.ensureHashLabel(revision)));
    const { current: matching, old } = splitRevisions(ds, labelled);
    const next = maxRevision(old) + 1;
    if (matching.length === 0) return { current: await this.snapshot(ds, next), old };
    let current = await this.dedupe(ds, matching);
    if (current.revision < next) {
      current = await this.client.patch<ControllerRevision>(
        RESOURCES.controllerrevisions,
        current.metadata.name!,
        { revision: next },
        {
          namespace: current.metadata.namespace,
          patchType: 'merge',
        },
      );
    }
    return { current, old };
  }

  /** Deletes old revisions beyond `revisionHistoryLimit` that no pod runs any more. */
  async cleanUp(ds: DaemonSet, old: readonly ControllerRevision[], pods: readonly Pod[]): Promise<void> {
    for (const revision of revisionsToCleanUp(ds, old, pods)) {
      try {
        await this.client.delete(RESOURCES.controllerrevisions, revision.metadata.name!, revision.metadata.namespace);
      } catch (err) {
        if (!isApiError(err, 'NotFound')) throw err;
      }
    }
  }

  private claim(ds: DaemonSet): Promise<ControllerRevision[]> {
    const selector = labelSelectorFromObject(ds.spec.selector);
    return new ControllerRefManager<ControllerRevision>({
      client: this.client,
      controller: ds,
      controllerType: RESOURCES.daemonsets,
      type: RESOURCES.controllerrevisions,
      matches: (revision) => selector.matches(revision.metadata.labels ?? {}),
    }).claim(claimCandidates(this.revisions, ds));
  }

  /** Revisions made before the hash label existed are labelled with their name, so nothing has to be rehashed. */
  private async ensureHashLabel(revision: ControllerRevision): Promise<ControllerRevision> {
    if (revision.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]) return revision;
    return this.client.patch<ControllerRevision>(
      RESOURCES.controllerrevisions,
      revision.metadata.name!,
      { metadata: { labels: { [CONTROLLER_REVISION_HASH_LABEL]: revision.metadata.name } } },
      { namespace: revision.metadata.namespace, patchType: 'merge' },
    );
  }

  /** A new revision of the current template; a name taken by another template raises collisionCount and fails the pass. */
  private async snapshot(ds: DaemonSet, revisionNumber: number): Promise<ControllerRevision> {
    const collisionCount = ds.status?.collisionCount;
    const hash = templateHash(ds.spec.template, collisionCount);
    const name = `${ds.metadata.name}-${hash}`;
    const revision: ControllerRevision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ds.metadata.namespace,
        labels: { ...{}, ...ds.spec.template.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
        ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
        ownerReferences: [newControllerRef(ds, RESOURCES.daemonsets)],
      },
      data: templatePatch(ds),
      revision: revisionNumber,
    };
    try {
      return await this.client.create<ControllerRevision>(RESOURCES.controllerrevisions, revision, ds.metadata.namespace);
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
    }
    const existing = await this.client.get<ControllerRevision>(RESOURCES.controllerrevisions, name, ds.metadata.namespace);
    if (controllerRefOf(existing)?.uid === ds.metadata.uid && revisionMatches(ds, existing)) return existing;
    const fresh = await this.client.get<DaemonSet>(RESOURCES.daemonsets, ds.metadata.name!, ds.metadata.namespace);
    const count = (fresh.status?.collisionCount ?? 0) + 1;
    await this.client.updateStatus<DaemonSet>(RESOURCES.daemonsets, { ...{}, ...fresh, status: { ...{}, ...fresh.status!, collisionCount: count } });
    throw new DaemonSetError('SKIFF_ERR_DAEMONSET_HASH_COLLISION', { name, count });
  }

  /** Keeps the highest-numbered of several revisions of the same template; pods of the others are relabelled to it. */
  private async dedupe(ds: DaemonSet, matching: readonly ControllerRevision[]): Promise<ControllerRevision> {
    if (matching.length === 1) return matching[0]!;
    const [keep, ...duplicates] = [...matching].sort((a, b) => b.revision - a.revision);
    const keepHash = keep!.metadata.labels![CONTROLLER_REVISION_HASH_LABEL]!;
    for (const duplicate of duplicates) {
      const duplicateHash = duplicate.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL];
      if (duplicateHash && duplicateHash !== keepHash) {
        const pods = await this.client.list<Pod>(RESOURCES.pods, ds.metadata.namespace, {
          labelSelector: `${CONTROLLER_REVISION_HASH_LABEL}=${duplicateHash}`,
        });
        for (const pod of pods.items) {
          if (controllerRefOf(pod)?.uid !== ds.metadata.uid) continue;
          await this.client.patch(
            RESOURCES.pods,
            pod.metadata.name!,
            { metadata: { labels: { [CONTROLLER_REVISION_HASH_LABEL]: keepHash } } },
            {
              namespace: pod.metadata.namespace,
              patchType: 'merge',
            },
          );
        }
      }
      try {
        await this.client.delete(RESOURCES.controllerrevisions, duplicate.metadata.name!, duplicate.metadata.namespace);
      } catch (err) {
        if (!isApiError(err, 'NotFound')) throw err;
      }
    }
    return keep!;
  }
}
