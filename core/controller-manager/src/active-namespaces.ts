import { isApiError, RESOURCES, type Namespace } from '@skiff/api';
import type { WorkQueue } from '@skiff/client';
import type { ApiClient, Informer } from '@skiff/kernel';

/** Whether a namespace can take new objects: it exists and is not being deleted. */
export function isNamespaceActive(namespace: Namespace | undefined): namespace is Namespace {
  return Boolean(namespace && !namespace.metadata.deletionTimestamp && namespace.status?.phase !== 'Terminating');
}

/**
 * Whether the namespace is active as the API server has it now, for a controller whose create was refused
 * while its cache still showed the namespace active (a deletion it has not seen yet).
 */
export async function isNamespaceActiveLive(client: ApiClient, name: string): Promise<boolean> {
  try {
    return isNamespaceActive(await client.get<Namespace>(RESOURCES.namespaces, name));
  } catch (err) {
    if (isApiError(err, 'NotFound')) return false;
    throw err;
  }
}

/** Queues a namespace's name whenever it appears or changes while active: for controllers that keep something in every namespace. */
export function enqueueActiveNamespaces(namespaces: Informer<Namespace>, queue: WorkQueue<string>): void {
  const enqueue = (namespace: Namespace) => {
    if (isNamespaceActive(namespace)) queue.add(namespace.metadata.name!);
  };
  namespaces.addHandlers({ add: enqueue, update: (_old, namespace) => enqueue(namespace) });
}
