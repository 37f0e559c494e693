import { afterAll, beforeAll, expect, it } from 'vitest';
import { definePlugin } from '@skiff/kernel';
import { pod, startTestServer, type TestServer } from '../test-support/cluster.js';

// As upstream's webhook e2e test ("mutate pod and apply defaults after mutation"): a mutating admission plugin
// adds an init container with nothing but a name and an image; the stored pod has it defaulted.
const addsInitContainer = definePlugin({
  name: 'test-adds-init-container',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.mutate.tap('test-adds-init-container', (request) => {
      if (request.operation !== 'CREATE' || request.resource.resource !== 'pods' || !request.object) return;
      const spec = request.object.spec as { initContainers?: object[] };
      spec.initContainers = [...(spec.initContainers ?? []), { name: 'webhook-added-init-container', image: 'busybox' }];
    });
  },
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false, plugins: [addsInitContainer] });
});
afterAll(async () => {
  await server?.stop();
});

it('defaults what mutating admission added, before validation', async () => {
  const created = await server.request('POST', '/api/v1/namespaces/default/pods', { body: pod('mutated') });
  expect(created.status).toBe(201);
  expect(created.json.spec.initContainers).toEqual([
    expect.objectContaining({
      name: 'webhook-added-init-container',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'Always',
    }),
  ]);
});
