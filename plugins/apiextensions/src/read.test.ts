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
