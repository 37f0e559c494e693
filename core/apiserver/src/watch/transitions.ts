import type { KubeObject } from '@skiff/api';
import type { WatchEvent } from '@skiff/kernel';
import type { StoreEvent } from '@skiff/store';

/** A watch event about an object (never an ERROR's Status). */
export interface ObjectEvent {
  type: WatchEvent['type'];
  object: KubeObject;
}

/**
 * What one store event means to a watcher with a filter (selectors, initializer visibility): an object
 * that starts matching is ADDED, one that stops matching is DELETED, and events for objects the watcher
 * never saw are dropped. Deleted objects carry the revision of their deletion, so an informer resumes
 * after it.
 */
export function translateEvent(event: StoreEvent, filter: ((object: KubeObject) => boolean) | undefined): ObjectEvent | undefined {
  if (event.type === 'DELETED') {
    if (filter && !filter(event.object)) return undefined;
    return { type: 'DELETED', object: withRevision(event.object, event.revision) };
  }
  if (!filter) return { type: event.type, object: event.object };
  const matches = filter(event.object);
  if (event.type === 'ADDED') return matches ? { type: 'ADDED', object: event.object } : undefined;
  const matched = event.prevObject ? filter(event.prevObject) : matches;
  if (matches && matched) return { type: 'MODIFIED', object: event.object };
  if (matches) return { type: 'ADDED', object: event.object };
  if (matched) return { type: 'DELETED', object: event.object };
  return undefined;
}

function withRevision(object: KubeObject, revision: number): KubeObject {
  const resourceVersion = String(revision);
  if (object.metadata.resourceVersion === resourceVersion) return object;
  return { ...{}, ...object, metadata: { ...{}, ...object.metadata, resourceVersion } };
}
