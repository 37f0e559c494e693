import { describe, expect, it } from 'vitest';
import type { Service } from '@skiff/api';
import { serviceEnvironment } from './service-env.js';

const service = (namespace: string, name: string, clusterIP: string, ports: NonNullable<Service['spec']>['ports']): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { clusterIP, ports },
});

const services = [
  service('default', 'kubernetes', '10.96.0.1', [{ name: 'https', port: 443, protocol: 'TCP' }]),
  service('shop', 'redis-primary', '10.96.0.20', [{ port: 6379 }, { name: 'metrics-port', port: 9121, protocol: 'UDP' }]),
  service('shop', 'headless', 'None', [{ port: 80 }]),
  service('other', 'elsewhere', '10.96.0.30', [{ port: 80 }]),
];

describe('service environment variables', () => {
  it("names every Service of the pod's namespace and default/kubernetes, Docker link variables included", () => {
    expect(Object.fromEntries(serviceEnvironment(services, 'shop', true))).toEqual({
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_SERVICE_PORT_HTTPS: '443',
      KUBERNETES_PORT: 'tcp://10.96.0.1:443',
      KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
      KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_443_TCP_PORT: '443',
      KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
      REDIS_PRIMARY_SERVICE_HOST: '10.96.0.20',
      REDIS_PRIMARY_SERVICE_PORT: '6379',
      REDIS_PRIMARY_SERVICE_PORT_METRICS_PORT: '9121',
      REDIS_PRIMARY_PORT: 'tcp://10.96.0.20:6379',
      REDIS_PRIMARY_PORT_6379_TCP: 'tcp://10.96.0.20:6379',
      REDIS_PRIMARY_PORT_6379_TCP_PROTO: 'tcp',
      REDIS_PRIMARY_PORT_6379_TCP_PORT: '6379',
      REDIS_PRIMARY_PORT_6379_TCP_ADDR: '10.96.0.20',
      REDIS_PRIMARY_PORT_9121_UDP: 'udp://10.96.0.20:9121',
      REDIS_PRIMARY_PORT_9121_UDP_PROTO: 'udp',
      REDIS_PRIMARY_PORT_9121_UDP_PORT: '9121',
      REDIS_PRIMARY_PORT_9121_UDP_ADDR: '10.96.0.20',
    });
  });

  it('keeps only default/kubernetes when enableServiceLinks is false', () => {
    expect([...serviceEnvironment(services, 'shop', false).keys()].every((name) => name.startsWith('KUBERNETES_'))).toBe(true);
  });
});
