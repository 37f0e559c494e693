import { isApiError, type KubeObject, type OwnerReference, type ResourceType } from '@skiff/api';
import { objectKey, runWorkers, WorkQueue } from '@skiff/client';
import { byOwnerUid, ownerReferencesPatch, OWNER_UID_INDEX } from '@skiff/controller-manager';
import type { ControllerContext, DeleteOptions, Informer } from '@skiff/kernel';
import { decideForDependent, isDeletingDependents, type OwnerState } from './decide.js';
import { hasFinalizer, removeFinalizerPatch } from './finalizers.js';
import { CONTROLLER_NAME, FINALIZER } from './names.js';
import { ownerTypeOf, resourceId } from './resources.js';

interface Watched {
  type: ResourceType;
  informer: Informer<KubeObject>;
}

/** Queue items name an object by resource and key: `replicasets.apps|default/web-5d8f`. */
function itemOf(type: ResourceType, object: KubeObject): string {
  return `${resourceId(type)}|${objectKey(object)}`;
}

/** Being deleted and holding a finalizer only the garbage collector removes. */
function isFinalizingOwner(object: KubeObject): boolean {
  return Boolean(object.metadata.deletionTimestamp) && (hasFinalizer(object, FINALIZER.ORPHAN) || hasFinalizer(object, FINALIZER.FOREGROUND));
}

/**
 * Background cascading deletion, like kube-controller-manager's garbage collector: dependents whose
 * owners are all gone are deleted; owners deleted with propagationPolicy Orphan have their dependents
 * released before they go; owners deleted in the foreground go only once their blocking dependents are
 * gone. Everything is derived from informer caches, so what went missing while the cluster was down is
 * collected when it starts.
 */
export class GarbageCollector {
  /** Dependents to check against their owners. */
  private readonly dependents = new WorkQueue<string>({ name: `${CONTROLLER_NAME}:dependents` });
  /** Owners being deleted whose orphan or foregroundDeletion finalizer is ours to resolve. */
  private readonly owners = new WorkQueue<string>({ name: `${CONTROLLER_NAME}:owners` });
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly ctx: ControllerContext,
    resources: readonly ResourceType[],
  ) {
    for (const type of resources) {
      const informer = ctx.informers.informer<KubeObject>(type);
      informer.addIndex(OWNER_UID_INDEX, byOwnerUid);
      informer.addHandlers({
        add: (object) => this.objectChanged(type, undefined, object),
        update: (old, object) => this.objectChanged(type, old, object),
        delete: (object) => this.objectDeleted(object),
      });
      this.watched.set(resourceId(type), { type, informer });
    }
  }

  /** Waits for every cache, then works both queues until the context's signal aborts. */
  async run(workers: number): Promise<void> {
    const { signal, logger } = this.ctx;
    try {
      await Promise.all([...this.watched.values()].map(({ informer }) => informer.waitForSync(signal)));
    } catch (err) {
      this.dependents.shutDown();
      this.owners.shutDown();
      if (signal.aborted) return;
      throw err;
    }
    await Promise.all([
      runWorkers(this.dependents, workers, (item) => this.processDependent(item), { logger, signal }),
      runWorkers(this.owners, workers, (item) => this.processOwner(item), { logger, signal }),
    ]);
  }

  // ---- events --------------------------------------------------------------------------------------

  private objectChanged(type: ResourceType, old: KubeObject | undefined, object: KubeObject): void {
    if (old?.metadata.resourceVersion === object.metadata.resourceVersion) return;
    const refsChanged = JSON.stringify(old?.metadata.ownerReferences ?? []) !== JSON.stringify(object.metadata.ownerReferences ?? []);
    if (refsChanged && object.metadata.ownerReferences?.length) this.dependents.add(itemOf(type, object));
    // A dependent that dropped a reference may have been what a foreground-deleting owner waited for.
    if (refsChanged && old) this.enqueueFinalizingOwners(old.metadata.namespace, old.metadata.ownerReferences ?? []);
    if (isFinalizingOwner(object)) this.owners.add(itemOf(type, object));
  }

  private objectDeleted(object: KubeObject): void {
    for (const { type, object: dependent } of this.dependentsOf(object.metadata.uid!)) this.dependents.add(itemOf(type, dependent));
    this.enqueueFinalizingOwners(object.metadata.namespace, object.metadata.ownerReferences ?? []);
  }

  private enqueueFinalizingOwners(namespace: string | undefined, refs: readonly OwnerReference[]): void {
    for (const ref of refs) {
      const type = ownerTypeOf(ref);
      const watched = type && this.watched.get(resourceId(type));
      if (!type || !watched) continue;
      const owner = watched.informer.get(type.namespaced ? `${namespace}/${ref.name}` : ref.name);
      if (owner?.metadata.uid === ref.uid && isFinalizingOwner(owner)) this.owners.add(itemOf(type, owner));
    }
  }

  // ---- dependents ----------------------------------------------------------------------------------

  private async processDependent(item: string): Promise<void> {
    const found = this.lookup(item);
    if (!found) return;
    const { type, object } = found;
    if (!object.metadata.ownerReferences?.length) return;
    // Already on its way out; one deleting in the foreground is the owners queue's to finish.
    if (object.metadata.deletionTimestamp) return;

    const owners = new Map<string, OwnerState>();
    for (const ref of object.metadata.ownerReferences) owners.set(ref.uid, await this.ownerState(object, ref));
    const dependents = this.dependentsOf(object.metadata.uid!).map((dependent) => dependent.object);
    const decision = decideForDependent(object, owners, dependents);
    if (decision.action === 'keep') return;
    if (decision.action === 'removeOwnerReferences') {
      const kept = object.metadata.ownerReferences.filter((ref) => !decision.uids.includes(ref.uid));
      return this.patchIgnoringGone(type, object, ownerReferencesPatch(object, kept));
    }
    if (decision.unblockOwnerReferences) {
      this.ctx.logger.info({ resource: resourceId(type), key: objectKey(object) }, 'owner references made non-blocking to break a dependency cycle');
      const unblocked = object.metadata.ownerReferences.map((ref) => (ref.blockOwnerDeletion ? { ...{}, ...ref, blockOwnerDeletion: false } : ref));
      await this.patchIgnoringGone(type, object, ownerReferencesPatch(object, unblocked));
    }
    this.ctx.logger.info(
      { resource: resourceId(type), key: objectKey(object), propagationPolicy: decision.propagationPolicy },
      'deleting object whose owners are gone',
    );
    await this.deleteIgnoringGone(type, object, { propagationPolicy: decision.propagationPolicy, preconditions: { uid: object.metadata.uid } });
  }

  /**
   * The informer cache answers quickly but may lag behind; an owner missing from it (or cached with
   * another uid) is only taken as gone once a live read agrees.
   */
  private async ownerState(dependent: KubeObject, ref: OwnerReference): Promise<OwnerState> {
    const type = ownerTypeOf(ref);
    if (!type) return 'exists';
    const namespace = type.namespaced ? dependent.metadata.namespace : undefined;
    if (type.namespaced && !namespace) return 'absent';
    const cached = this.watched.get(resourceId(type))?.informer.get(namespace ? `${namespace}/${ref.name}` : ref.name);
    if (cached?.metadata.uid === ref.uid) return stateOfOwner(cached);
    try {
      const live = await this.ctx.client.get(type, ref.name, namespace);
      return live.metadata.uid === ref.uid ? stateOfOwner(live) : 'absent';
    } catch (err) {
      if (isApiError(err, 'NotFound')) return 'absent';
      throw err;
    }
  }

  // ---- owners --------------------------------------------------------------------------------------

  private async processOwner(item: string): Promise<void> {
    const found = this.lookup(item);
    if (!found || !isFinalizingOwner(found.object)) return;
    const { type, object: owner } = found;
    if (hasFinalizer(owner, FINALIZER.ORPHAN)) return this.orphanDependents(type, owner);
    return this.awaitDependents(type, owner);
  }

  /** propagationPolicy Orphan: release every dependent, then let the owner go. */
  private async orphanDependents(type: ResourceType, owner: KubeObject): Promise<void> {
    const uid = owner.metadata.uid!;
    for (const { type: dependentType, object } of this.dependentsOf(uid)) {
      const kept = (object.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
      await this.patchIgnoringGone(dependentType, object, ownerReferencesPatch(object, kept));
    }
    await this.patchIgnoringGone(type, owner, removeFinalizerPatch(owner, FINALIZER.ORPHAN));
  }

  /**
   * propagationPolicy Foreground: dependents are deleted first (through the dependent queue, which sees
   * the owner as waiting); the owner's finalizer goes once no dependent blocking its deletion is left.
   */
  private async awaitDependents(type: ResourceType, owner: KubeObject): Promise<void> {
    const uid = owner.metadata.uid!;
    const dependents = this.dependentsOf(uid);
    const blocking = dependents.filter(({ object }) => object.metadata.ownerReferences?.some((ref) => ref.uid === uid && ref.blockOwnerDeletion));
    if (blocking.length === 0) return this.patchIgnoringGone(type, owner, removeFinalizerPatch(owner, FINALIZER.FOREGROUND));
    for (const { type: dependentType, object } of dependents) {
      if (!object.metadata.deletionTimestamp) this.dependents.add(itemOf(dependentType, object));
    }
  }

  // ---- helpers -------------------------------------------------------------------------------------

  private lookup(item: string): { type: ResourceType; object: KubeObject } | undefined {
    const separator = item.indexOf('|');
    const watched = this.watched.get(item.slice(0, separator));
    const object = watched?.informer.get(item.slice(separator + 1));
    return watched && object ? { type: watched.type, object } : undefined;
  }

  /** Every cached object, of any watched resource, that names `uid` as an owner. */
  private dependentsOf(uid: string): { type: ResourceType; object: KubeObject }[] {
    return [...this.watched.values()].flatMap(({ type, informer }) => informer.byIndex(OWNER_UID_INDEX, uid).map((object) => ({ type, object })));
  }

  private async patchIgnoringGone(type: ResourceType, object: KubeObject, patch: unknown): Promise<void> {
    try {
      await this.ctx.client.patch(type, object.metadata.name!, patch, { namespace: object.metadata.namespace, patchType: 'json' });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
  }

  /** A dependent already gone, or replaced by a new object of the same name (uid precondition), needs nothing more. */
  private async deleteIgnoringGone(type: ResourceType, object: KubeObject, options: DeleteOptions): Promise<void> {
    try {
      await this.ctx.client.delete(type, object.metadata.name!, object.metadata.namespace, options);
    } catch (err) {
      if (!isApiError(err, 'NotFound') && !isApiError(err, 'Conflict')) throw err;
    }
  }
}

function stateOfOwner(owner: KubeObject): OwnerState {
  return isDeletingDependents(owner) ? 'waiting' : 'exists';
}
