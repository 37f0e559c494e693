import { errors, type KubeObject, type Pod, type ResourceType } from '@skiff/api';
import type { ApiClient, Logger, VolumeContext } from '@skiff/kernel';

const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

export interface FakeContext extends VolumeContext {
  events: string[];
  tokenRequests: { name: string; namespace: string; body: any }[];
  objects: Map<string, KubeObject>;
}

const keyOf = (resource: string, namespace: string | undefined, name: string) => `${resource}/${namespace ?? ''}/${name}`;

/** A volume context over an in-memory API: get() answers the objects given (NotFound otherwise), TokenRequests get numbered tokens. */
export function fakeContext(objects: (KubeObject & { resource: string })[] = []): FakeContext {
  const store = new Map<string, KubeObject>();
  for (const { resource, ...object } of objects) store.set(keyOf(resource, object.metadata.namespace, object.metadata.name!), object as KubeObject);
  const tokenRequests: FakeContext['tokenRequests'] = [];
  const client = {
    async get(type: ResourceType, name: string, namespace?: string) {
      const found = store.get(keyOf(type.resource, namespace, name));
      if (!found) throw errors.notFound(type.resource, type.group, name);
      return structuredClone(found);
    },
    async createSubresource(type: ResourceType, name: string, namespace: string, subresource: string, body: unknown) {
      if (type.resource !== 'serviceaccounts' || subresource !== 'token') throw errors.notFound(type.resource, type.group, name);
      tokenRequests.push({ name, namespace, body });
      return { status: { token: `token-${tokenRequests.length}`, expirationTimestamp: new Date(Date.now() + 3600_000).toISOString() } };
    },
  } as unknown as ApiClient;
  const events: string[] = [];
  return {
    nodeName: 'node-1',
    dataDir: '/nonexistent',
    client,
    logger: silent,
    node: () => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { allocatable: { cpu: '4', memory: '8Gi' } } }),
    event: (type, reason, message) => void events.push(`${type} ${reason}: ${message}`),
    events,
    tokenRequests,
    objects: store,
  };
}

export function testPod(spec: Partial<Pod['spec']> = {}, metadata: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'uid-web',
      labels: { app: 'web', tier: 'front' },
      annotations: { note: 'a "quoted"\nline' },
      ...metadata,
    },
    spec: {
      nodeName: 'node-1',
      containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { memory: '128Mi' } } }],
      ...spec,
    },
  };
}
