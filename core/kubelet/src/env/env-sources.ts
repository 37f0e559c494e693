import { isApiError, type KubeObject, type ResourceType } from '@skiff/api';
import type { ApiClient, Informer } from '@skiff/kernel';
import type { Service } from './service-env.js';

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

export interface Secret extends KubeObject {
  data?: Record<string, string>;
}

export const CONFIG_MAPS: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
export const SECRETS: ResourceType = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true };
export const SERVICES: ResourceType = { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true };

/** Where a container's environment comes from besides the pod: ConfigMaps, Secrets and Services. */
export interface EnvSources {
  /** The ConfigMap, or undefined when it does not exist. */
  configMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  secret(namespace: string, name: string): Promise<Secret | undefined>;
  /** Every Service the pod's service variables may come from (its namespace's and default's). */
  services(namespace: string): Promise<Service[]>;
}

async function found<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (err) {
    if (isApiError(err, 'NotFound')) return undefined;
    throw err;
  }
}

/**
 * ConfigMaps and Secrets read from the API when a container is created (as the kubelet's Get strategy does);
 * Services from an informer when the kubelet has one, else listed.
 */
export class ApiEnvSources implements EnvSources {
  constructor(
    private readonly client: ApiClient,
    private readonly serviceInformer?: Informer<Service>,
  ) {}

  configMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    return found(this.client.get<ConfigMap>(CONFIG_MAPS, name, namespace));
  }

  secret(namespace: string, name: string): Promise<Secret | undefined> {
    return found(this.client.get<Secret>(SECRETS, name, namespace));
  }

  async services(namespace: string): Promise<Service[]> {
    if (this.serviceInformer) return [...this.serviceInformer.list(namespace), ...(namespace === 'default' ? [] : this.serviceInformer.list('default'))];
    const lists = await Promise.all([...new Set([namespace, 'default'])].map((ns) => this.client.list<Service>(SERVICES, ns)));
    return lists.flatMap((list) => list.items);
  }
}
