import { RESOURCES, type Binding } from '@skiff/api';
import type { ApiClient, SchedulerPlugin } from '@skiff/kernel';
import { DefaultBinderError } from './errors.js';
import { DEFAULT_BINDER } from './names.js';

/**
 * DefaultBinder: binds the pod by creating its `binding` subresource (POST pods/<name>/binding) with the
 * scheduler's client — the API server sets spec.nodeName and PodScheduled. Resolves null once bound; an
 * API error (the pod is gone, already bound, its uid changed) is thrown for the framework to report.
 */
export function createDefaultBinder(): SchedulerPlugin {
  let client: ApiClient | undefined;
  return {
    name: DEFAULT_BINDER,
    init(handle) {
      client = handle.client;
    },
    async bind(_state, pod, nodeName) {
      const { name, namespace, uid } = pod.metadata;
      if (!client) throw new DefaultBinderError('SKIFF_ERR_DEFAULT_BINDER_NO_CLIENT', { pod: `${namespace}/${name}`, node: nodeName });
      const binding: Binding = {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace, ...(uid ? { uid } : {}) },
        target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
      };
      await client.createSubresource(RESOURCES.pods, name!, namespace!, 'binding', binding);
      return null;
    },
  };
}
