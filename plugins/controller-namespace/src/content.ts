import { errorMessage, isApiError, type KubeObject } from '@skiff/api';
import type { ApiClient, DeleteOptions } from '@skiff/kernel';
import { groupResource, type ContentResource } from './resources.js';

/** What is left in a namespace after one pass of deletions. */
export interface ContentReport {
  /** Objects still there (typically finishing a graceful deletion or held by finalizers), by group-resource. */
  remaining: Map<string, number>;
  /** Finalizers those objects still carry, with how many objects carry each. */
  finalizers: Map<string, number>;
  /** One message per resource whose deletion or listing failed. */
  failures: string[];
}

/** Dependents go in the background, as Kubernetes' namespace controller deletes them. */
const DELETE_OPTIONS: DeleteOptions = Object.freeze({ propagationPolicy: 'Background' });

/**
 * Deletes every object of every `resources` kind in `namespace`, then lists what is left. A failure
 * with one kind is reported and the others are still deleted, so one broken kind does not hold up the rest.
 */
export async function deleteContent(client: ApiClient, namespace: string, resources: readonly ContentResource[]): Promise<ContentReport> {
  const report: ContentReport = { remaining: new Map(), finalizers: new Map(), failures: [] };
  for (const resource of resources) {
    try {
      await deleteAll(client, namespace, resource);
      const left = (await client.list(resource.type, namespace)).items;
      if (left.length > 0) report.remaining.set(groupResource(resource.type), left.length);
      for (const object of left)
        for (const finalizer of object.metadata.finalizers ?? []) report.finalizers.set(finalizer, (report.finalizers.get(finalizer) ?? 0) + 1);
    } catch (err) {
      report.failures.push(`${groupResource(resource.type)}: ${errorMessage(err)}`);
    }
  }
  return report;
}

export function isEmpty(report: ContentReport): boolean {
  return report.remaining.size === 0 && report.failures.length === 0;
}

async function deleteAll(client: ApiClient, namespace: string, { type, deleteCollection }: ContentResource): Promise<void> {
  if (deleteCollection && client.deleteCollection) return client.deleteCollection(type, namespace, DELETE_OPTIONS);
  for (const object of (await client.list(type, namespace)).items) await deleteIgnoringGone(client, type, object);
}

async function deleteIgnoringGone(client: ApiClient, type: ContentResource['type'], object: KubeObject): Promise<void> {
  try {
    await client.delete(type, object.metadata.name!, object.metadata.namespace, DELETE_OPTIONS);
  } catch (err) {
    if (!isApiError(err, 'NotFound')) throw err;
  }
}
