import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '@skiff/api';
import { fakeApi } from '../test-support/fake-api.js';
import { boundPod } from '../test-support/objects.js';
import { containerEnvironment, expandCommand } from './container-env.js';
import { ApiEnvSources } from './env-sources.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

const api = fakeApi({
  configmaps: [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data: { color: 'blue', 'bad=key': 'x', size: 'L' } },
  ],
  secrets: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, data: { password: b64('s3cret'), user: b64('admin') } }],
  services: [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kubernetes', namespace: 'default' },
      spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443 }] },
    },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'default' }, spec: { clusterIP: '10.96.0.9', ports: [{ port: 5432 }] } },
  ],
});
const sources = new ApiEnvSources(api);
const placement = { podIPs: ['10.244.1.5'], hostIPs: ['192.168.0.2'], allocatable: { cpu: '4', memory: '8Gi' } };

async function envOf(container: Partial<Container>, spec: Partial<Pod['spec']> = {}) {
  const events: string[] = [];
  const pod = boundPod('web-1', { serviceAccountName: 'builder', ...spec, containers: [{ name: 'app', image: 'nginx', ...container }] });
  pod.metadata.labels = { app: 'web' };
  const env = await containerEnvironment(pod, pod.spec.containers[0]!, sources, placement, (type, reason, message) =>
    events.push(`${type} ${reason}: ${message}`),
  );
  return { env: Object.fromEntries(env), order: [...env.keys()], events };
}

describe('container environment', () => {
  it('resolves values, $(VAR) references and every valueFrom source', async () => {
    const { env } = await envOf({
      resources: { requests: { cpu: '250m' }, limits: { memory: '64Mi' } },
      env: [
        { name: 'GREETING', value: 'hello' },
        { name: 'MESSAGE', value: '$(GREETING) $(LATER) $$(GREETING) $(DB_SERVICE_HOST)' },
        { name: 'LATER', value: 'later' },
        { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'settings', key: 'color' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
        { name: 'MAYBE', valueFrom: { configMapKeyRef: { name: 'absent', key: 'x', optional: true } } },
        { name: 'MAYBE_KEY', valueFrom: { secretKeyRef: { name: 'creds', key: 'nope', optional: true } } },
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
        { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'ACCOUNT', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'POD_IPS', valueFrom: { fieldRef: { fieldPath: 'status.podIPs' } } },
        { name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } },
        { name: 'CPU_REQUEST', valueFrom: { resourceFieldRef: { resource: 'requests.cpu', divisor: '1m' } } },
        { name: 'CPU_LIMIT', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
        { name: 'MEMORY_LIMIT', valueFrom: { resourceFieldRef: { containerName: 'app', resource: 'limits.memory', divisor: '1Mi' } } },
      ],
    });
    expect(env).toMatchObject({
      GREETING: 'hello',
      MESSAGE: 'hello $(LATER) $(GREETING) 10.96.0.9',
      COLOR: 'blue',
      PASSWORD: 's3cret',
      POD_NAME: 'web-1',
      POD_NAMESPACE: 'default',
      POD_UID: 'uid-web-1',
      APP: 'web',
      NODE: 'node-1',
      ACCOUNT: 'builder',
      POD_IP: '10.244.1.5',
      POD_IPS: '10.244.1.5',
      HOST_IP: '192.168.0.2',
      CPU_REQUEST: '250',
      CPU_LIMIT: '4',
      MEMORY_LIMIT: '64',
    });
    expect(env).not.toHaveProperty('MAYBE');
    expect(env).not.toHaveProperty('MAYBE_KEY');
  });

  it('takes envFrom with its prefix, skips invalid names with an event, and lets env override it', async () => {
    const { env, events } = await envOf({
      envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'CFG_' }, { secretRef: { name: 'creds' } }, { configMapRef: { name: 'absent', optional: true } }],
      env: [{ name: 'CFG_size', value: 'XL' }],
    });
    expect(env).toMatchObject({ CFG_color: 'blue', CFG_size: 'XL', password: 's3cret', user: 'admin' });
    expect(events).toEqual([
      'Warning InvalidEnvironmentVariableNames: Keys [CFG_bad=key] from the EnvFrom configMap default/settings were skipped since they are considered invalid environment variable names.',
    ]);
  });

  it('adds the service variables last, unless enableServiceLinks is false', async () => {
    const linked = await envOf({
      env: [
        { name: 'FIRST', value: '1' },
        { name: 'DB_SERVICE_PORT', value: 'mine' },
      ],
    });
    expect(linked.order.slice(0, 2)).toEqual(['FIRST', 'DB_SERVICE_PORT']);
    expect(linked.env).toMatchObject({
      DB_SERVICE_HOST: '10.96.0.9',
      DB_SERVICE_PORT: 'mine',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    });
    const unlinked = await envOf({}, { enableServiceLinks: false });
    expect(unlinked.env).toHaveProperty('KUBERNETES_SERVICE_HOST', '10.96.0.1');
    expect(unlinked.env).not.toHaveProperty('DB_SERVICE_HOST');
  });

  it("fails with Kubernetes' messages when a required ConfigMap, Secret or key is missing", async () => {
    const failure = (env: Container['env']) =>
      envOf({ env }).then(
        () => 'no error',
        (err: Error) => `${err.name}: ${err.message}`,
      );
    expect(await failure([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'absent', key: 'k' } } }])).toBe(
      'ContainerConfigError: configmap "absent" not found',
    );
    expect(await failure([{ name: 'X', valueFrom: { configMapKeyRef: { name: 'settings', key: 'k' } } }])).toBe(
      "ContainerConfigError: couldn't find key k in ConfigMap default/settings",
    );
    expect(await failure([{ name: 'X', valueFrom: { secretKeyRef: { name: 'absent', key: 'k' } } }])).toBe('ContainerConfigError: secret "absent" not found');
    expect(await failure([{ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'k' } } }])).toBe(
      "ContainerConfigError: couldn't find key k in Secret default/creds",
    );
    const fromMissing = await envOf({ envFrom: [{ secretRef: { name: 'absent' } }] }).catch((err: Error) => err.message);
    expect(fromMissing).toBe('secret "absent" not found');
  });

  it('expands command and args against the final environment', () => {
    const env = new Map([['NAME', 'world']]);
    expect(expandCommand({ name: 'app', command: ['echo', 'hello $(NAME)'], args: ['$$(NAME)', '$(MISSING)'] }, env)).toEqual({
      command: ['echo', 'hello world'],
      args: ['$(NAME)', '$(MISSING)'],
    });
  });
});
