import type { EndpointSlice, Node, Pod, Service, ServicePort } from '@skiff/api';

// Objects for the unit tests, shaped as the API server returns them.

export function service(
  name: string,
  options: { ports?: ServicePort[]; clusterIP?: string; publishNotReadyAddresses?: boolean; labels?: Record<string, string> } = {},
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      creationTimestamp: '2025-01-01T00:00:00Z',
      ...(options.labels ? { labels: options.labels } : {}),
    },
    spec: {
      selector: { app: name },
      clusterIP: options.clusterIP ?? '10.96.0.10',
      ports: options.ports ?? [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      ...(options.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
    },
  };
}

export interface PodOptions {
  app?: string;
  ip?: string;
  ready?: boolean;
  node?: string;
  terminating?: boolean;
  phase?: NonNullable<Pod['status']>['phase'];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
}

export function pod(name: string, options: PodOptions = {}): Pod {
  const ready = options.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: { app: options.app ?? 'web' },
      ...(options.terminating ? { deletionTimestamp: '2025-01-01T00:10:00Z' } : {}),
    },
    spec: { nodeName: options.node ?? 'node-1', containers: [{ name: 'c', image: 'nginx', ports: options.ports ?? [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: options.phase ?? 'Running',
      ...(options.ip === '' ? {} : { podIP: options.ip ?? '10.244.1.1', podIPs: [{ ip: options.ip ?? '10.244.1.1' }] }),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2025-01-01T00:01:00Z' }],
    },
  };
}

export function node(name: string, zone?: string): Node {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, ...(zone ? { labels: { 'topology.kubernetes.io/zone': zone } } : {}) } };
}

/** What the API server answers for a created slice: a name, uid, resourceVersion and generation. */
export function stored(slice: EndpointSlice, name: string, resourceVersion = '10'): EndpointSlice {
  return { ...{}, ...slice, metadata: { ...{}, ...slice.metadata, name, uid: `uid-${name}`, resourceVersion, generation: 1 } };
}
