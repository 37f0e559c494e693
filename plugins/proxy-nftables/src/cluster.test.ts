import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type EndpointSlice, type Pod, type Service } from '@skiff/api';
import { startTestCluster, waitFor, type TestCluster } from '@skiff/testing';
import plugin from './index.js';
import { isRoot, Lab, TCP_PORT } from './test-support/lab.js';
import { sliceObject } from './test-support/proxy.js';

// A whole in-process cluster (dev preset: simulated runtime, IPAM network) whose kubelet runs this proxy, with its
// rules in a test namespace: what is written to the API becomes rules, and the kubelet's stop removes them.

if (!isRoot) console.log('cluster.test.ts skipped: network namespaces and nftables need root');

const TABLE = 'skiff-proxy-cluster';
const lab = new Lab();
let cluster: TestCluster | undefined;
let e1 = '';

const table = () => {
  try {
    return lab.in(lab.node, ['nft', 'list', 'table', 'ip', TABLE]);
  } catch {
    return '';
  }
};

beforeAll(async () => {
  if (!isRoot) return;
  lab.setUp();
  e1 = await lab.addEndpoint('e1');
  cluster = await startTestCluster({
    plugins: [
      [plugin, { netns: lab.node, table: TABLE, minSyncIntervalMs: 10 }],
      ['@skiff/kubelet', { serviceProxy: 'nftables' }],
    ],
  });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  await lab.cleanup();
});

describe.skipIf(!isRoot)('nftables service proxy in a cluster', () => {
  it('a Service selecting a pod becomes rules to the pod IP; the ServiceCIDR becomes the refused range', async () => {
    const { client } = cluster!;
    await client.create<Pod>(RESOURCES.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: TCP_PORT }] }] },
    });
    const service = await client.create<Service>(RESOURCES.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: TCP_PORT }] },
    });
    const podIP = await waitFor('the pod IP', async () => (await client.get<Pod>(RESOURCES.pods, 'web', 'default')).status?.podIP, { timeoutMs: 20_000 });
    await waitFor('the rules of the Service', () => table().includes(`${service.spec!.clusterIP} . tcp . 80 : goto svc-default/web/tcp/http`), {
      timeoutMs: 20_000,
    });
    expect(table()).toContain(`dnat to ${podIP}:${TCP_PORT}`);
    // The API server's own Service, from the dev preset's ServiceCIDR object.
    expect(table()).toMatch(/set service-cidrs \{[^}]*elements = \{ 10\.96\.0\.0\/12 \}/);
  });

  it('a selector-less Service with its own EndpointSlice carries real traffic', async () => {
    const { client } = cluster!;
    const ports = [{ name: 'http', port: 80, targetPort: TCP_PORT }];
    const service = await client.create<Service>(RESOURCES.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'manual', namespace: 'default' },
      spec: { ports },
    });
    await client.create<EndpointSlice>(RESOURCES.endpointslices, sliceObject('manual', ports, [{ ip: e1 }]));
    const clusterIP = service.spec!.clusterIP!;
    await waitFor('the rules of the Service', () => table().includes(`${clusterIP} . tcp . 80 : goto svc-`), { timeoutMs: 20_000 });
    const [answer] = await lab.request({ host: clusterIP, port: 80 });
    expect(answer!.answer).toMatch(/^e1 /);
  });

  it("the kubelet's stop removes the table", async () => {
    await cluster!.stop();
    cluster = undefined;
    expect(table()).toBe('');
  });
});
