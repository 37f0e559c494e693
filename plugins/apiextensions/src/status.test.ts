import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type CustomResourceDefinition, type KubeObject } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin from './index.js';

// A status write of a custom resource changes its status and nothing else, as upstream's status strategy for
// custom resources: the spec and the metadata (labels, annotations, finalizers, owners) are the stored ones.

const GROUP = 'status.example.com';
const type = { group: GROUP, version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
type Widget = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };
let cluster: ControlPlane;

beforeAll(async () => {
  cluster = await startControlPlane([plugin]);
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } as never,
        },
      ],
    },
  };
  await cluster.client.create(RESOURCES.customresourcedefinitions, crd);
  await waitFor('the CRD served', () => cluster.client.list(type, 'default'));
}, 60_000);
afterAll(async () => cluster?.stop());

describe('the status subresource of a custom resource', () => {
  it('takes the status of a write, and keeps the stored spec, labels and annotations', async () => {
    const created = await cluster.client.create<Widget>(
      type,
      { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'one', namespace: 'default', labels: { a: '1' } }, spec: { size: 1 } },
      'default',
    );
    const written = await cluster.client.patch<Widget>(
      type,
      'one',
      { metadata: { labels: { a: '2' }, annotations: { note: 'x' } }, spec: { size: 2 }, status: { phase: 'Ready' } },
      { namespace: 'default', subresource: 'status' },
    );
    expect(written.status).toEqual({ phase: 'Ready' });
    expect(written.spec).toEqual({ size: 1 });
    expect(written.metadata.labels).toEqual({ a: '1' });
    expect(written.metadata.annotations).toBeUndefined();
    expect(written.metadata.generation).toBe(created.metadata.generation);
  });
});
