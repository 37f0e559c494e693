import { errors, type KubeObject, type ResourceType } from '@skiff/api';
import type { ApiClient } from '@skiff/kernel';

const keyOf = (resource: string, namespace: string | undefined, name: string) => `${resource}/${namespace ?? ''}/${name}`;

/** Objects by the resource they are served as: `{ configmaps: [...], secrets: [...] }`. */
export type FakeObjects = Record<string, KubeObject[]>;

export interface FakeApi extends ApiClient {
  /** Adds or replaces an object. */
  put(resource: string, object: KubeObject): void;
  remove(resource: string, namespace: string | undefined, name: string): void;
  /** The TokenRequests it answered: service account, namespace and body. */
  tokenRequests: { name: string; namespace: string; body: unknown }[];
}

/**
 * Just enough of an API client for the kubelet's pod side in unit tests: get and list over in-memory objects
 * (NotFound otherwise) and TokenRequests answered with numbered tokens.
 */
export function fakeApi(objects: FakeObjects = {}): FakeApi {
  const store = new Map<string, { resource: string; object: KubeObject }>();
  const put = (resource: string, object: KubeObject) =>
    void store.set(keyOf(resource, object.metadata.namespace, object.metadata.name!), { resource, object: structuredClone(object) });
  for (const [resource, list] of Object.entries(objects)) for (const object of list) put(resource, object);
  const tokenRequests: FakeApi['tokenRequests'] = [];
  const api = {
    put,
    remove: (resource: string, namespace: string | undefined, name: string) => void store.delete(keyOf(resource, namespace, name)),
    tokenRequests,
    async get(type: ResourceType, name: string, namespace?: string) {
      const found = store.get(keyOf(type.resource, namespace, name));
      if (!found) throw errors.notFound(type.resource, type.group, name);
      return structuredClone(found.object);
    },
    async list(type: ResourceType, namespace?: string) {
      const items = [...store.values()]
        .filter((entry) => entry.resource === type.resource && (namespace === undefined || entry.object.metadata.namespace === namespace))
        .map((entry) => structuredClone(entry.object));
      return { apiVersion: 'v1', kind: `${type.kind}List`, metadata: {}, items };
    },
    async createSubresource(type: ResourceType, name: string, namespace: string, subresource: string, body: unknown) {
      if (type.resource !== 'serviceaccounts' || subresource !== 'token') throw errors.notFound(type.resource, type.group, name);
      tokenRequests.push({ name, namespace, body });
      return { status: { token: `token-${tokenRequests.length}`, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() } };
    },
  };
  return api as unknown as FakeApi;
}
