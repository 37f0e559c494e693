import { RESOURCES, type EndpointSlice, type Pod, type Service } from '@skiff/api';
import kubelet from '@skiff/kubelet';
import criSimulated from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import scheduler from '@skiff/scheduler';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import endpointSliceController from './index.js';

// The controller with pods that a scheduler places and simulated kubelets run: IPs and readiness come
// from the kubelet, not from the test.

let plane: ControlPlane;
beforeAll(async () => {
  plane = await startControlPlane([endpointSliceController, scheduler, resourcesFit, [kubelet, { heartbeatSeconds: 1 }], criSimulated, networkIpam], {
    config: { nodes: 2, logLevel: 'silent' },
  });
});
afterAll(async () => {
  await plane?.stop();
});

const ns = 'default';

async function readyEndpoints(): Promise<Map<string, string>> {
  const slices = await plane.client.list<EndpointSlice>(RESOURCES.endpointslices, ns, { labelSelector: 'kubernetes.io/service-name=echo' });
  const ready = new Map<string, string>();
  for (const endpoint of slices.items.flatMap((slice) => slice.endpoints ?? [])) {
    if (endpoint.conditions?.ready) ready.set(endpoint.targetRef!.name!, endpoint.addresses[0]!);
  }
  return ready;
}

it('lists the pods a kubelet runs, with the IPs it gave them, and drops a pod the kubelet stops', async () => {
  await plane.client.create<Service>(
    RESOURCES.services,
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ port: 80, targetPort: 'http' }] } },
    ns,
  );
  for (const name of ['echo-1', 'echo-2', 'echo-3']) {
    await plane.client.create<Pod>(
      RESOURCES.pods,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'echo' } },
        spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
      },
      ns,
    );
  }
  const endpoints = await waitFor('three ready endpoints', async () => ((await readyEndpoints()).size === 3 ? readyEndpoints() : undefined));
  const pods = (await plane.client.list<Pod>(RESOURCES.pods, ns, { labelSelector: 'app=echo' })).items;
  expect(new Map(pods.map((pod) => [pod.metadata.name!, pod.status!.podIP!]))).toEqual(endpoints);
  const [slice] = (await plane.client.list<EndpointSlice>(RESOURCES.endpointslices, ns, { labelSelector: 'kubernetes.io/service-name=echo' })).items;
  expect(slice!.ports).toEqual([{ name: '', port: 8080, protocol: 'TCP' }]);
  expect(new Set(slice!.endpoints!.map((endpoint) => endpoint.nodeName))).toEqual(new Set(pods.map((pod) => pod.spec.nodeName)));

  await plane.client.delete(RESOURCES.pods, 'echo-2', ns);
  await waitFor('echo-2 gone from the slice', async () => {
    const list = await plane.client.list<EndpointSlice>(RESOURCES.endpointslices, ns, { labelSelector: 'kubernetes.io/service-name=echo' });
    const names = list.items.flatMap((s) => s.endpoints ?? []).map((endpoint) => endpoint.targetRef!.name);
    return names.length === 2 && !names.includes('echo-2');
  });
});
