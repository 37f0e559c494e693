import { isApiError, RESOURCES, type ConfigMap, type Secret, type Service } from '@skiff/api';
import type { ApiClient, Informer } from '@skiff/kernel';

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
    return found(this.client.get<ConfigMap>(RESOURCES.configmaps, name, namespace));
  }

  secret(namespace: string, name: string): Promise<Secret | undefined> {
    return found(this.client.get<Secret>(RESOURCES.secrets, name, namespace));
  }

  async services(namespace: string): Promise<Service[]> {
    if (this.serviceInformer) return [...this.serviceInformer.list(namespace), ...(namespace === 'default' ? [] : this.serviceInformer.list('default'))];
    const lists = await Promise.all([...new Set([namespace, 'default'])].map((ns) => this.client.list<Service>(RESOURCES.services, ns)));
    return lists.flatMap((list) => list.items);
  }
}
