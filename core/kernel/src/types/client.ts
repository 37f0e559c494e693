import type { KubeList, KubeObject, ResourceType } from '@skiff/api';
import type { WatchEvent } from './transport.js';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

export interface WatchOptions extends ListOptions {
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** Which objects a `deletecollection` removes, and how each one is deleted. */
export interface DeleteCollectionOptions extends DeleteOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

/**
 * The client every component uses. Implemented by @skiff/client over HTTPS or the in-process loopback;
 * errors are `ApiError`s rebuilt from the server's Status.
 */
export interface ApiClient {
  /** GET of the object, or of one of its subresources (a Deployment's `scale`). */
  get<T extends KubeObject = KubeObject>(type: ResourceType, name: string, namespace?: string, options?: { subresource?: string }): Promise<T>;
  list<T extends KubeObject = KubeObject>(type: ResourceType, namespace?: string, options?: ListOptions): Promise<KubeList<T>>;
  create<T extends KubeObject = KubeObject>(type: ResourceType, object: T, namespace?: string): Promise<T>;
  /** PUT of the object, or of one of its subresources (a namespace's `finalize`). */
  update<T extends KubeObject = KubeObject>(type: ResourceType, object: T, options?: { subresource?: string }): Promise<T>;
  updateStatus<T extends KubeObject = KubeObject>(type: ResourceType, object: T): Promise<T>;
  patch<T extends KubeObject = KubeObject>(
    type: ResourceType,
    name: string,
    patch: unknown,
    options?: { namespace?: string; patchType?: PatchType; subresource?: string; fieldManager?: string },
  ): Promise<T>;
  delete(type: ResourceType, name: string, namespace?: string, options?: DeleteOptions): Promise<void>;
  /**
   * Deletes every object of `type` in `namespace` (all namespaces when undefined) that the selectors match,
   * each as a single delete would. Optional: without it, callers list and delete one by one.
   */
  deleteCollection?(type: ResourceType, namespace: string | undefined, options?: DeleteCollectionOptions): Promise<void>;
  /** Posts to a subresource (pods/binding, pods/eviction). */
  createSubresource<T = unknown>(type: ResourceType, name: string, namespace: string, subresource: string, body: unknown): Promise<T>;
  watch<T extends KubeObject = KubeObject>(type: ResourceType, namespace: string | undefined, options: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

export interface InformerHandlers<T extends KubeObject = KubeObject> {
  add?(object: T): void;
  update?(oldObject: T, newObject: T): void;
  delete?(object: T): void;
}

/** A shared, read-only cache of one resource type, kept current by list + watch. Cached objects must not be mutated. */
export interface Informer<T extends KubeObject = KubeObject> {
  readonly type: ResourceType;
  addHandlers(handlers: InformerHandlers<T>): void;
  /** namespace/name for namespaced objects, name for cluster-scoped ones. */
  get(key: string): T | undefined;
  list(namespace?: string): T[];
  /** Objects whose index value equals `value` (indexes added with addIndex before start). */
  byIndex(index: string, value: string): T[];
  addIndex(index: string, indexer: (object: T) => string[]): void;
  hasSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
}

export interface InformerFactory {
  /** One informer per type (and per list options), shared by everyone who asks. */
  informer<T extends KubeObject = KubeObject>(
    type: ResourceType,
    options?: { namespace?: string; fieldSelector?: string; labelSelector?: string },
  ): Informer<T>;
  start(signal: AbortSignal): void;
  waitForSync(signal?: AbortSignal): Promise<void>;
}

export interface EventRecorder {
  event(object: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): void;
}
