// kube-system/extension-apiserver-authentication: where kube-apiserver publishes how it authenticates clients,
// and where upstream's kube-scheduler, kube-controller-manager and aggregated API servers read it at start
// (`client-ca-file` when client certificates are accepted, `requestheader-*` when a front proxy is trusted).
// Each authenticator plugin publishes its own keys through this one writer, so none overwrites another's.
import { isApiError, RESOURCES, type ConfigMap } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';

export const AUTHENTICATION_CONFIGMAP = Object.freeze({ namespace: 'kube-system', name: 'extension-apiserver-authentication' });

/** The most attempts at a write that lost a race with another publisher (409 on create or update). */
const MAX_ATTEMPTS = 5;

/**
 * Merges `data` into the ConfigMap, creating it when missing; keys others published stay. Nothing is written when
 * every key already holds its value. A ConfigMap that exists but cannot be read (created by another publisher and
 * held by an initializer configured for configmaps) cannot be merged into: the keys are left out, not the start.
 */
export async function publishAuthenticationConfig(client: ApiClient, data: Readonly<Record<string, string>>): Promise<void> {
  const type = RESOURCES.configmaps;
  const { namespace, name } = AUTHENTICATION_CONFIGMAP;
  for (let attempt = 1; ; attempt++) {
    try {
      const existing = await currentConfigMap(client);
      if (!existing) {
        await client.create<ConfigMap>(type, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { ...data } }, namespace);
        return;
      }
      const current = existing.data ?? {};
      if (Object.entries(data).every(([key, value]) => current[key] === value)) return;
      await client.update<ConfigMap>(type, { ...{}, ...existing, data: { ...{}, ...current, ...data } });
      return;
    } catch (err) {
      if (isApiError(err, 'AlreadyExists') && !(await currentConfigMap(client))) return;
      if ((isApiError(err, 'Conflict') || isApiError(err, 'AlreadyExists')) && attempt < MAX_ATTEMPTS) continue;
      throw err;
    }
  }
}

async function currentConfigMap(client: ApiClient): Promise<ConfigMap | undefined> {
  try {
    return await client.get<ConfigMap>(RESOURCES.configmaps, AUTHENTICATION_CONFIGMAP.name, AUTHENTICATION_CONFIGMAP.namespace);
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}
