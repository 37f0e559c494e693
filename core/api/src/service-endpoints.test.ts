import { describe, expect, it } from 'vitest';
import { findPort, servicesForPodEvent, shouldPodBeInEndpoints, shouldSetHostname } from './service-endpoints.js';
import type { ContainerPort, Pod, Service } from './types.js';

function service(name: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { selector: { app: name }, clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  };
}

interface PodOptions {
  app?: string;
  ip?: string;
  ready?: boolean;
  terminating?: boolean;
  phase?: NonNullable<Pod['status']>['phase'];
  ports?: ContainerPort[];
}

/** A pod as the API server returns it: running and ready on node-1 unless the options say otherwise. */
function pod(name: string, options: PodOptions = {}): Pod {
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
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx', ports: options.ports ?? [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: options.phase ?? 'Running',
      ...(options.ip === '' ? {} : { podIP: options.ip ?? '10.244.1.1', podIPs: [{ ip: options.ip ?? '10.244.1.1' }] }),
      conditions: [{ type: 'Ready', status: (options.ready ?? true) ? 'True' : 'False', lastTransitionTime: '2025-01-01T00:01:00Z' }],
    },
  };
}

describe('findPort', () => {
  const withSidecar: Pod = {
    ...pod('p', { ports: [{ name: 'http', containerPort: 8080 }] }),
  };
  withSidecar.spec = {
    ...withSidecar.spec,
    initContainers: [
      { name: 'once', image: 'busybox', ports: [{ name: 'metrics', containerPort: 9000 }] },
      { name: 'proxy', image: 'envoy', restartPolicy: 'Always', ports: [{ name: 'admin', containerPort: 9901 }] },
    ],
  };

  it('takes a number as is, looks a name up among containers and sidecars with the same protocol', () => {
    expect(findPort(withSidecar, { port: 80, targetPort: 3000 })).toBe(3000);
    expect(findPort(withSidecar, { port: 80 })).toBe(80);
    expect(findPort(withSidecar, { port: 80, targetPort: 'http' })).toBe(8080);
    expect(findPort(withSidecar, { port: 80, targetPort: 'http', protocol: 'UDP' })).toBeUndefined();
    expect(findPort(withSidecar, { port: 80, targetPort: 'admin' })).toBe(9901);
    // Init containers that run to completion serve nothing.
    expect(findPort(withSidecar, { port: 80, targetPort: 'metrics' })).toBeUndefined();
  });
});

describe('shouldPodBeInEndpoints', () => {
  it('needs an IP and an unfinished pod; terminating ones only when asked', () => {
    expect(shouldPodBeInEndpoints(pod('a'), false)).toBe(true);
    expect(shouldPodBeInEndpoints(pod('a', { ip: '' }), true)).toBe(false);
    expect(shouldPodBeInEndpoints(pod('a', { phase: 'Failed' }), true)).toBe(false);
    expect(shouldPodBeInEndpoints(pod('a', { terminating: true }), false)).toBe(false);
    expect(shouldPodBeInEndpoints(pod('a', { terminating: true }), true)).toBe(true);
  });
});

describe('shouldSetHostname', () => {
  it('names the pod when its subdomain is the Service', () => {
    const named = pod('a');
    named.spec = { ...named.spec, hostname: 'a-host', subdomain: 'web' };
    expect(shouldSetHostname(named, service('web'))).toBe(true);
    expect(shouldSetHostname(named, service('other'))).toBe(false);
  });
});

describe('servicesForPodEvent', () => {
  const web = service('web');
  const api = service('api');
  const headless = { ...service('none'), spec: { ...service('none').spec, selector: undefined } };
  const services = [web, api, headless];
  const names = (list: { metadata: { name?: string } }[]) => list.map((s) => s.metadata.name).sort();

  it('an added or deleted pod concerns the Services selecting it (none for Services without a selector)', () => {
    expect(names(servicesForPodEvent(services, undefined, pod('p', { app: 'web' })))).toEqual(['web']);
  });

  it('ignores resyncs and updates that change nothing endpoints show', () => {
    const before = pod('p', { app: 'web' });
    expect(servicesForPodEvent(services, before, before)).toEqual([]);
    const annotated = { ...before, metadata: { ...before.metadata, resourceVersion: '2', annotations: { a: 'b' } } };
    expect(servicesForPodEvent(services, before, annotated)).toEqual([]);
    const unready = { ...pod('p', { app: 'web', ready: false }), metadata: { ...before.metadata, resourceVersion: '3' } };
    expect(names(servicesForPodEvent(services, before, unready))).toEqual(['web']);
  });

  it('a relabelled pod concerns the Services it left and joined; both sides when its endpoint changed too', () => {
    const before = pod('p', { app: 'web' });
    const moved = { ...before, metadata: { ...before.metadata, resourceVersion: '2', labels: { app: 'api' } } };
    expect(names(servicesForPodEvent(services, before, moved))).toEqual(['api', 'web']);
    const extraLabel = { ...before, metadata: { ...before.metadata, resourceVersion: '2', labels: { app: 'web', extra: 'x' } } };
    expect(servicesForPodEvent(services, before, extraLabel)).toEqual([]);
    const extraAndUnready = { ...pod('p', { app: 'web', ready: false }), metadata: { ...extraLabel.metadata } };
    expect(names(servicesForPodEvent(services, before, extraAndUnready))).toEqual(['web']);
  });
});
