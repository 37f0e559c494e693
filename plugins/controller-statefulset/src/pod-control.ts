import { errorMessage, isApiError, RESOURCES, type Pod, type StatefulSet } from '@skiff/api';
import { ownerReferencesPatch } from '@skiff/controller-manager';
import type { ApiClient, EventRecorder } from '@skiff/kernel';
import { claimOwnerReferences, claimOwnersUpToDate, claimsFor, existingClaims, hasUnexpectedController, type ClaimLookup } from './claims.js';
import { identityMatches, storageMatches, updateIdentity, updateStorage } from './identity.js';
import { EVENT_REASON } from './names.js';

type Verb = 'create' | 'update' | 'delete';

const REASONS: Record<Verb, { ok: string; failed: string }> = {
  create: { ok: EVENT_REASON.CREATED, failed: EVENT_REASON.CREATE_FAILED },
  update: { ok: EVENT_REASON.UPDATED, failed: EVENT_REASON.UPDATE_FAILED },
  delete: { ok: EVENT_REASON.DELETED, failed: EVENT_REASON.DELETE_FAILED },
};

/** How many times a pod update is retried against a fresh copy after a conflict. */
const UPDATE_ATTEMPTS = 5;

/**
 * Creates, updates and deletes a set's pods and claims through the API, recording upstream's events on
 * the set ("create Pod web-0 in StatefulSet web successful", "create Claim www-web-0 Pod web-0 in
 * StatefulSet web success", and their failures).
 */
export class StatefulPodControl {
  constructor(
    private readonly client: ApiClient,
    private readonly recorder: EventRecorder,
    private readonly claims: ClaimLookup,
  ) {}

  /** Creates the pod's claims, then the pod, then sets claim owners now that the pod has a uid. */
  async createPod(set: StatefulSet, pod: Pod): Promise<void> {
    try {
      await this.createClaims(set, pod);
    } catch (err) {
      this.podEvent('create', set, pod, err);
      throw err;
    }
    let created: Pod;
    try {
      created = await this.client.create<Pod>(RESOURCES.pods, pod, set.metadata.namespace);
    } catch (err) {
      // Our cache had not seen the pod yet: its watch event brings the set back here.
      if (isApiError(err, 'AlreadyExists')) return;
      this.podEvent('create', set, pod, err);
      throw err;
    }
    try {
      await this.updateClaimOwners(set, created);
    } catch (err) {
      this.podEvent('update', set, created, err);
      throw err;
    }
    this.podEvent('create', set, created);
  }

  /** Creates the claims a Pending pod is missing and sets their owners. */
  async createMissingClaims(set: StatefulSet, pod: Pod): Promise<void> {
    await this.createClaims(set, pod);
    try {
      await this.updateClaimOwners(set, pod);
    } catch (err) {
      this.podEvent('update', set, pod, err);
      throw err;
    }
  }

  /**
   * Restores the identity labels and claim volumes of a pod and the owners of its claims, writing the pod
   * only when it changed; on a conflict, tries again from the pod as the server has it.
   */
  async updatePod(set: StatefulSet, cached: Pod): Promise<void> {
    let pod = structuredClone(cached);
    let attempted = false;
    for (let attempt = 1; ; attempt += 1) {
      try {
        let changed = false;
        if (!identityMatches(set, pod)) {
          updateIdentity(set, pod);
          changed = true;
        }
        if (!storageMatches(set, pod)) {
          updateStorage(set, pod);
          changed = true;
          await this.createClaims(set, pod);
        }
        if (existingClaims(set, pod, this.claims).some((claim) => !claimOwnersUpToDate(claim, set, pod))) await this.updateClaimOwners(set, pod);
        if (!changed) return;
        attempted = true;
        await this.client.update<Pod>(RESOURCES.pods, pod);
        this.podEvent('update', set, pod);
        return;
      } catch (err) {
        if (isApiError(err, 'Conflict') && attempt < UPDATE_ATTEMPTS) {
          pod = await this.client.get<Pod>(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace);
          continue;
        }
        if (isApiError(err, 'NotFound') && attempted) return;
        this.podEvent('update', set, pod, err);
        throw err;
      }
    }
  }

  /**
   * Deletes the pod the cache showed — not a newer one of the same name, hence the uid precondition. A
   * pod already gone, or already replaced, is no failure.
   */
  async deletePod(set: StatefulSet, pod: Pod): Promise<void> {
    try {
      await this.client.delete(RESOURCES.pods, pod.metadata.name!, pod.metadata.namespace, { preconditions: { uid: pod.metadata.uid } });
    } catch (err) {
      if (isApiError(err, 'NotFound') || isApiError(err, 'Conflict')) return;
      this.podEvent('delete', set, pod, err);
      throw err;
    }
    this.podEvent('delete', set, pod);
  }

  /** Sets the owners of the pod's existing claims as the retention policy asks. */
  async updateClaimOwners(set: StatefulSet, pod: Pod): Promise<void> {
    for (const claim of existingClaims(set, pod, this.claims)) {
      if (hasUnexpectedController(claim, set, pod)) {
        this.recorder.event(
          set,
          'Warning',
          EVENT_REASON.CONFLICTING_CONTROLLER,
          `PersistentVolumeClaim ${claim.metadata.name} has a conflicting OwnerReference that acts as a managing controller, the retention policy is ignored for this claim`,
        );
      }
      if (claimOwnersUpToDate(claim, set, pod)) continue;
      try {
        await this.client.patch(RESOURCES.persistentvolumeclaims, claim.metadata.name!, ownerReferencesPatch(claim, claimOwnerReferences(claim, set, pod)), {
          namespace: claim.metadata.namespace,
          patchType: 'json',
        });
      } catch (err) {
        throw new Error(`could not update claim ${claim.metadata.name} for delete policy ownerRefs: ${errorMessage(err)}`, { cause: err });
      }
    }
  }

  /** Creates each claim of the pod that does not exist; a claim being deleted is an error (the pod must wait). */
  private async createClaims(set: StatefulSet, pod: Pod): Promise<void> {
    const errors: Error[] = [];
    for (const claim of claimsFor(set, pod)) {
      const existing = this.claims(set.metadata.namespace!, claim.metadata.name!);
      if (existing) {
        if (existing.metadata.deletionTimestamp) errors.push(new Error(`pvc ${claim.metadata.name} is being deleted`));
        continue;
      }
      const owners = claimOwnerReferences(claim, set, pod);
      if (owners.length > 0) claim.metadata.ownerReferences = owners;
      try {
        await this.client.create(RESOURCES.persistentvolumeclaims, claim, set.metadata.namespace);
        this.claimEvent(set, pod, claim.metadata.name!);
      } catch (err) {
        if (isApiError(err, 'AlreadyExists')) continue;
        this.claimEvent(set, pod, claim.metadata.name!, err);
        errors.push(new Error(`failed to create PVC ${claim.metadata.name}: ${errorMessage(err)}`, { cause: err }));
      }
    }
    if (errors.length === 1) throw errors[0]!;
    if (errors.length > 1) throw new AggregateError(errors, `[${errors.map((err) => err.message).join(', ')}]`);
  }

  private podEvent(verb: Verb, set: StatefulSet, pod: Pod, err?: unknown): void {
    const subject = `${verb} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name}`;
    if (err === undefined) this.recorder.event(set, 'Normal', REASONS[verb].ok, `${subject} successful`);
    else this.recorder.event(set, 'Warning', REASONS[verb].failed, `${subject} failed error: ${errorMessage(err)}`);
  }

  private claimEvent(set: StatefulSet, pod: Pod, claim: string, err?: unknown): void {
    if (err === undefined)
      this.recorder.event(set, 'Normal', EVENT_REASON.CREATED, `create Claim ${claim} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`);
    else
      this.recorder.event(
        set,
        'Warning',
        EVENT_REASON.CREATE_FAILED,
        `create Claim ${claim} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errorMessage(err)}`,
      );
  }
}
