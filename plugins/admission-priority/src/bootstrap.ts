import { isApiError, RESOURCES, type PriorityClass } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';
import { SYSTEM_PRIORITY_CLASSES } from './names.js';

/**
 * Creates the system classes that are missing, through the API server (so watchers and the audit log see them, as
 * kube-apiserver's own start-up hook writes them). Existing ones are left alone: the API server's validation keeps
 * their value and global-default flag fixed. Returns the highest resourceVersion written (0: nothing written).
 */
export async function ensureSystemClasses(client: ApiClient): Promise<number> {
  let written = 0;
  for (const { name, value, description } of SYSTEM_PRIORITY_CLASSES) {
    try {
      await client.get<PriorityClass>(RESOURCES.priorityclasses, name);
      continue;
    } catch (err) {
      if (!isApiError(err, 'NotFound')) throw err;
    }
    const wanted: PriorityClass = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value, description };
    try {
      const created = await client.create<PriorityClass>(RESOURCES.priorityclasses, wanted);
      written = Math.max(written, Number(created.metadata.resourceVersion ?? 0));
    } catch (err) {
      if (!isApiError(err, 'AlreadyExists')) throw err;
    }
  }
  return written;
}
