import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type CustomResourceDefinition, type KubeObject } from '@skiff/api';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin from './index.js';

// Custom resources read as their schema says today, as kube-apiserver's storage decoding does: an object stored
// before the schema gained a default reads with it, and a field the schema no longer declares is pruned. A real
// control plane, requests through the whole pipeline.

const GROUP = 'reads.example.com';
const type = { group: GROUP, version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };
type Gadget = KubeObject & { spec?: Record<string, unknown> };
let cluster: ControlPlane;

const schema = (spec: Record<string, unknown>) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } } });

beforeAll(async () => {
  cluster = await startControlPlane([plugin]);
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: schema({ a: { type: 'string' }, b: { type: 'string' } }) as never }],
    },
  };
  await cluster.client.create(RESOURCES.customresourcedefinitions, crd);
  await waitFor('the CRD served', () => cluster.client.list(type, 'default'));
}, 60_000);
afterAll(async () => cluster?.stop());

describe('custom resources read from storage', () => {
  it('gain the defaults and lose the fields their schema gained and dropped after they were stored', async () => {
    await cluster.client.create<Gadget>(
      type,
      { apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'one', namespace: 'default' }, spec: { a: 'x', b: 'y' } },
      'default',
    );
    const crd = await cluster.client.get<CustomResourceDefinition>(RESOURCES.customresourcedefinitions, `gadgets.${GROUP}`);
    const versions = [{ ...crd.spec.versions[0]!, schema: schema({ a: { type: 'string' }, c: { type: 'string', default: 'filled' } }) as never }];
    await cluster.client.update(RESOURCES.customresourcedefinitions, { ...crd, spec: { ...crd.spec, versions } });
    const read = await waitFor('the default on read', async () => {
      const gadget = await cluster.client.get<Gadget>(type, 'one', 'default');
      return gadget.spec?.c ? gadget : undefined;
    });
    expect(read.spec).toEqual({ a: 'x', c: 'filled' });
    expect((await cluster.client.list<Gadget>(type, 'default')).items.map((item) => item.spec)).toEqual([{ a: 'x', c: 'filled' }]);
  });
});

describe('custom resources stored in an earlier storage version', () => {
  const versioned = { group: GROUP, version: 'v2', resource: 'widgets', kind: 'Widget', namespaced: true };
  it('are patched and replaced as the version asked for shows them', async () => {
    const open = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    const crd: CustomResourceDefinition = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: open as never },
          { name: 'v2', served: true, storage: false, schema: open as never },
        ],
      },
    };
    await cluster.client.create(RESOURCES.customresourcedefinitions, crd);
    await waitFor('the CRD served', () => cluster.client.list(versioned, 'default'));
    await cluster.client.create(
      { ...versioned, version: 'v1' },
      { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, data: { a: 'b' } },
      'default',
    );
    // As upstream's webhook test does: v2 becomes the storage version, then the object is patched through v2.
    const stored = await cluster.client.get<CustomResourceDefinition>(RESOURCES.customresourcedefinitions, `widgets.${GROUP}`);
    const versions = stored.spec.versions.map((version) => ({ ...version, storage: version.name === 'v2' }));
    await cluster.client.update(RESOURCES.customresourcedefinitions, { ...stored, spec: { ...stored.spec, versions } });
    const patched = await waitFor('the patch through v2', () =>
      cluster.client
        .patch<KubeObject>(versioned, 'w', [{ op: 'add', path: '/dummy', value: 'test' }], { namespace: 'default', patchType: 'json' })
        .catch(() => undefined),
    );
    expect(patched).toMatchObject({ apiVersion: `${GROUP}/v2`, data: { a: 'b' }, dummy: 'test' });
    const replaced = await cluster.client.update(versioned, { ...patched, more: 1 });
    expect(replaced).toMatchObject({ apiVersion: `${GROUP}/v2`, dummy: 'test', more: 1 });
  });
});
