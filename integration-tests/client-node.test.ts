import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { CLUSTER_TIMEOUT, startSkiff, tempDir, waitFor, type RunningSkiff } from './harness.js';

// The official JavaScript client library against a real `skiff up`, over HTTPS with the CA it generated.
let skiff: RunningSkiff;
let kc: k8s.KubeConfig;
const dataDir = tempDir('client-node');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir]);
  kc = new k8s.KubeConfig();
  kc.loadFromFile(skiff.kubeconfig);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('@kubernetes/client-node', () => {
  it('lists the bootstrap namespaces', async () => {
    const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
    expect(list.items.map((n) => n.metadata?.name)).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']));
  });

  it('creates a deployment and watches its pods become Running', async () => {
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'api' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'api' } },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'nginx:1.27' }] } },
        },
      },
    });
    const running = new Set<string>();
    const watch = new k8s.Watch(kc);
    const request = await watch.watch(
      '/api/v1/namespaces/default/pods',
      { labelSelector: 'app=api' },
      (type, pod: k8s.V1Pod) => {
        if (pod.status?.phase === 'Running') running.add(pod.metadata!.name!);
      },
      () => undefined,
    );
    try {
      await waitFor('2 Running pods seen by the watch', () => running.size === 2, CLUSTER_TIMEOUT);
    } finally {
      request.abort();
    }
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=api' });
    expect(pods.items.every((p) => p.status?.podIP && p.spec?.nodeName)).toBe(true);
    const deployment = await apps.readNamespacedDeployment({ name: 'api', namespace: 'default' });
    await waitFor(
      'available replicas',
      async () => (await apps.readNamespacedDeployment({ name: 'api', namespace: 'default' })).status?.availableReplicas === 2,
      CLUSTER_TIMEOUT,
    );
    expect(deployment.metadata?.uid).toBeTruthy();
  });
});
