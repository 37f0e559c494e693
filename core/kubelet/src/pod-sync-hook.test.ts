import { afterAll, beforeAll, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { definePlugin } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { nodePlugins } from './test-support/node-plugins.js';

/** A podSync handler, as a node plugin would write one: it sees each pass and reports into the pod's status. */
const reportSyncs = definePlugin({
  name: 'test-report-syncs',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.podSync.tapPromise('test-report-syncs', async (context) => {
      if (context.pod.metadata.labels?.report !== 'yes') return;
      const running = (await context.runtime.listContainers()).filter((c) => c.state === 'CONTAINER_RUNNING').length;
      context.reasons.push(`synced on ${context.node.metadata.name} with ${running} running`);
    });
  },
});

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane([...nodePlugins(), reportSyncs], { config: { nodes: 1, logLevel: 'silent' } });
});
afterAll(() => cluster?.stop());

it('runs podSync taps on every pod worker pass, after the containers are synced, and puts their reasons in status.message', async () => {
  const pod = (name: string, labels: Record<string, string>): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
  });
  await cluster.client.create(RESOURCES.pods, pod('reported', { report: 'yes' }), 'default');
  await cluster.client.create(RESOURCES.pods, pod('quiet', {}), 'default');
  const reported = await waitFor('the podSync reason in the status', async () => {
    const current = await cluster.client.get<Pod>(RESOURCES.pods, 'reported', 'default');
    return current.status?.phase === 'Running' && current.status.message?.startsWith('synced on node-1') && current;
  });
  expect(reported.status?.message).toMatch(/^synced on node-1 with [1-9]\d* running$/);
  const quiet = await waitFor('the other pod running', async () => {
    const current = await cluster.client.get<Pod>(RESOURCES.pods, 'quiet', 'default');
    return current.status?.phase === 'Running' && current;
  });
  expect(quiet.status?.message).toBeUndefined();
});
