import { errorMessage, isApiError, type KubeObject, type ResourceType } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { controllerRefOf, newControllerRef, ownerReferencesPatch } from './owner-references.js';

export interface ClaimOptions<T extends KubeObject> {
  client: ApiClient;
  /** The object doing the claiming: a ReplicaSet claiming pods, a Deployment claiming ReplicaSets. */
  controller: KubeObject;
  controllerType: ResourceType;
  /** The type of the objects being claimed. */
  type: ResourceType;
  /** Whether the controller's selector selects an object. */
  matches(object: T): boolean;
}

/**
 * Sorts candidates into what a controller owns, like Kubernetes' ControllerRefManager: it keeps objects
 * it already controls and still selects, adopts selected orphans (never ones being deleted), and
 * releases objects it controls but no longer selects. Objects controlled by someone else are left alone.
 */
export class ControllerRefManager<T extends KubeObject> {
  private adoptionCheck?: Promise<void>;

  constructor(private readonly options: ClaimOptions<T>) {}

  /**
   * Returns the objects the controller owns after claiming (adopted ones as the server returned them);
   * throws if any adoption or release failed.
   */
  async claim(candidates: readonly T[]): Promise<T[]> {
    const claimed: T[] = [];
    const failures: unknown[] = [];
    for (const object of candidates) {
      try {
        const owned = await this.claimOne(object);
        if (owned) claimed.push(owned);
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length > 0) {
      const messages = failures.map(errorMessage).join('; ');
      throw new AggregateError(failures, `claiming ${this.options.type.resource} for ${this.describeController()}: ${messages}`);
    }
    return claimed;
  }

  /** The object if the controller owns it (as the server returned it, when just adopted). */
  private async claimOne(object: T): Promise<T | undefined> {
    const { controller, matches } = this.options;
    const controllerRef = controllerRefOf(object);
    if (controllerRef) {
      if (controllerRef.uid !== controller.metadata.uid) return undefined;
      if (matches(object)) return object;
      if (controller.metadata.deletionTimestamp) return undefined;
      await this.release(object);
      return undefined;
    }
    if (controller.metadata.deletionTimestamp || !matches(object)) return undefined;
    if (object.metadata.deletionTimestamp) return undefined;
    if (controller.metadata.namespace !== undefined && controller.metadata.namespace !== object.metadata.namespace) return undefined;
    return this.adopt(object);
  }

  private async adopt(object: T): Promise<T | undefined> {
    this.adoptionCheck ??= this.checkControllerIsCurrent();
    await this.adoptionCheck;
    const { controller, controllerType } = this.options;
    const references = [...(object.metadata.ownerReferences ?? []), newControllerRef(controller, controllerType)];
    return this.patchReferences(object, references);
  }

  private async release(object: T): Promise<void> {
    const uid = this.options.controller.metadata.uid;
    const references = (object.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
    await this.patchReferences(object, references);
  }

  /** The patched object; undefined when it is already gone, so there is nothing left to claim. */
  private async patchReferences(object: T, references: Parameters<typeof ownerReferencesPatch>[1]): Promise<T | undefined> {
    try {
      return await this.options.client.patch<T>(this.options.type, object.metadata.name!, ownerReferencesPatch(object, references), {
        namespace: object.metadata.namespace,
        patchType: 'json',
      });
    } catch (err) {
      if (isApiError(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  /**
   * The cached controller may be stale: a live read makes sure it was not deleted (or deleted and
   * recreated under the same name) before anything is adopted by it.
   */
  private async checkControllerIsCurrent(): Promise<void> {
    const { client, controller, controllerType } = this.options;
    const fresh = await client.get(controllerType, controller.metadata.name!, controller.metadata.namespace);
    if (fresh.metadata.uid !== controller.metadata.uid)
      throw new Error(`${this.describeController()} is gone: found uid ${fresh.metadata.uid}, wanted ${controller.metadata.uid}`);
    if (fresh.metadata.deletionTimestamp) throw new Error(`${this.describeController()} is being deleted since ${fresh.metadata.deletionTimestamp}`);
  }

  private describeController(): string {
    const { controller, controllerType } = this.options;
    return `${controllerType.kind} ${controller.metadata.namespace ?? ''}/${controller.metadata.name}`;
  }
}
