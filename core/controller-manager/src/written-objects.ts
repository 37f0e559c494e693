import { isApiError, type KubeObject, type ResourceType } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { isNamespaceTerminating } from './namespace-terminating.js';

type Expected = { key: string; generation: number } | { key: string; deleted: true };

/**
 * The objects a controller wrote or deleted until its informer shows them, keyed by uid and filed under the
 * work item (`key`) they belong to: a sync that planned from a cache without its own last writes would create
 * a second object for the same thing, or undo a change.
 */
export class WrittenObjects<T extends KubeObject = KubeObject> {
  private readonly expected = new Map<string, Expected>();

  /** A create or update for `key` answered with `object`: the cache is current once it shows this generation. */
  written(key: string, object: T): void {
    if (object.metadata.uid) this.expected.set(object.metadata.uid, { key, generation: object.metadata.generation ?? 0 });
  }

  /** A delete of `object` was accepted: the cache is current once it is gone from it. */
  deleted(key: string, object: T): void {
    if (object.metadata.uid) this.expected.set(object.metadata.uid, { key, deleted: true });
  }

  /** The informer saw `object` (added or updated). */
  observed(object: T): void {
    const uid = object.metadata.uid;
    const expected = uid ? this.expected.get(uid) : undefined;
    if (expected && 'generation' in expected && (object.metadata.generation ?? 0) >= expected.generation) this.expected.delete(uid!);
  }

  /** The informer saw `object` go. */
  observedDeletion(object: T): void {
    if (object.metadata.uid) this.expected.delete(object.metadata.uid);
  }

  /** Whether `cached` (the objects of `key` in the cache) misses one of this controller's writes; what it shows is forgotten. */
  stale(key: string, cached: readonly T[]): boolean {
    const byUid = new Map(cached.map((object) => [object.metadata.uid, object]));
    let stale = false;
    for (const [uid, expected] of this.expected) {
      if (expected.key !== key) continue;
      const object = byUid.get(uid);
      const seen = 'deleted' in expected ? !object : object !== undefined && (object.metadata.generation ?? 0) >= expected.generation;
      if (seen) this.expected.delete(uid);
      else stale = true;
    }
    return stale;
  }

  /** Drops what is expected for `key` (its owner is gone, or no longer this controller's). */
  forget(key: string): void {
    for (const [uid, expected] of this.expected) if (expected.key === key) this.expected.delete(uid);
  }
}

/** What a sync decided to write for one work item. */
export interface WritePlan<T extends KubeObject> {
  /** New objects, created in order. */
  create: readonly T[];
  /** Changed objects, written as they are (their resourceVersion guards them). */
  update: readonly T[];
  /** Objects that are no longer wanted. */
  delete: readonly T[];
}

/** How {@link applyWrites} writes a plan. */
export interface ApplyWritesOptions<T extends KubeObject> {
  /** The work item the writes are remembered under. */
  key: string;
  /** Where the writes are remembered. */
  written: WrittenObjects<T>;
  /** Where new objects are created. */
  namespace?: string;
  /** False while the owner is being deleted: new objects then would race the garbage collector. */
  create: boolean;
}

/**
 * Writes `plan` — creates, updates, then deletes — remembering each answer in `options.written`. A create
 * refused because the namespace is being deleted ends the sync quietly.
 */
export async function applyWrites<T extends KubeObject>(
  client: ApiClient,
  type: ResourceType,
  plan: WritePlan<T>,
  options: ApplyWritesOptions<T>,
): Promise<void> {
  const { key, written } = options;
  if (options.create) {
    for (const object of plan.create) {
      try {
        written.written(key, await client.create<T>(type, object, options.namespace));
      } catch (err) {
        if (isNamespaceTerminating(err)) return;
        throw err;
      }
    }
  }
  for (const object of plan.update) written.written(key, await client.update<T>(type, object));
  await deleteObjects(client, type, plan.delete, { key, written });
}

/**
 * Deletes `objects`, each only while it is still the same object (uid precondition); one already gone is fine.
 * With `remember`, each accepted delete is remembered under its key.
 */
export async function deleteObjects<T extends KubeObject>(
  client: ApiClient,
  type: ResourceType,
  objects: readonly T[],
  remember?: { key: string; written: WrittenObjects<T> },
): Promise<void> {
  for (const object of objects) {
    try {
      await client.delete(type, object.metadata.name!, object.metadata.namespace, { preconditions: { uid: object.metadata.uid } });
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
    remember?.written.deleted(remember.key, object);
  }
}
