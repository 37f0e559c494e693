import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { createLoopbackClient } from '@skiff/client';
import type { ApiClient, AuthzAttributes } from '@skiff/kernel';
import { startControlPlane, type ControlPlane } from '@skiff/testing';
import authzNode, { authorizeNode, NodeGraph, podReferences } from './index.js';

function pod(name: string, node: string | undefined, spec: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'app', image: 'busybox' }], ...spec },
  };
}

const nodeUser = (name: string) => ({ username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] });

function attributes(overrides: Partial<AuthzAttributes>): AuthzAttributes {
  return {
    user: nodeUser('node-1'),
    verb: 'get',
    isResourceRequest: true,
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'secrets',
    subresource: '',
    namespace: 'default',
    name: 'db',
    path: '',
    ...overrides,
  };
}

describe('pod references', () => {
  it('finds every secret, configmap, claim and service account a pod names', () => {
    const refs = podReferences(
      pod('web', 'node-1', {
        serviceAccountName: 'web-sa',
        imagePullSecrets: [{ name: 'pull' }],
        volumes: [
          { name: 's', secret: { secretName: 'vol-secret' } },
          { name: 'c', configMap: { name: 'vol-cm' } },
          { name: 'p', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
          { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
          { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } },
        ],
        initContainers: [{ name: 'init', image: 'busybox', envFrom: [{ secretRef: { name: 'init-env' } }] }],
        containers: [
          {
            name: 'app',
            image: 'busybox',
            env: [
              { name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'a' } } },
              { name: 'B', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'b' } } },
            ],
            envFrom: [{ configMapRef: { name: 'envfrom-cm' } }],
          },
        ],
      }),
    );
    expect([...refs.secrets].sort()).toEqual(['env-secret', 'init-env', 'proj-secret', 'pull', 'vol-secret']);
    expect([...refs.configmaps].sort()).toEqual(['env-cm', 'envfrom-cm', 'proj-cm', 'vol-cm']);
    expect([...refs.persistentvolumeclaims].sort()).toEqual(['data', 'web-scratch']);
    expect([...refs.serviceaccounts]).toEqual(['web-sa']);
  });
});

describe('node authorizer decisions', () => {
  const graph = new NodeGraph();
  graph.applyPod(
    '/registry/pods/default/web',
    pod('web', 'node-1', {
      volumes: [
        { name: 's', secret: { secretName: 'db' } },
        { name: 'd', persistentVolumeClaim: { claimName: 'data' } },
      ],
    }),
  );
  graph.applyPod('/registry/pods/default/other', pod('other', 'node-2', { volumes: [{ name: 's', secret: { secretName: 'theirs' } }] }));
  graph.applyClaim('/registry/persistentvolumeclaims/default/data', { metadata: { name: 'data', namespace: 'default' }, spec: { volumeName: 'pv-1' } });
  const noRecheck = async () => false;
  const decide = (overrides: Partial<AuthzAttributes>) => authorizeNode(attributes(overrides), graph, noRecheck);

  it('allows what a pod bound to the node uses, and its bound volume', async () => {
    expect(await decide({})).toEqual({ decision: 'allow' });
    expect(await decide({ resource: 'persistentvolumeclaims', name: 'data' })).toEqual({ decision: 'allow' });
    expect(await decide({ resource: 'persistentvolumes', namespace: '', name: 'pv-1' })).toEqual({ decision: 'allow' });
  });

  it('denies other objects of those kinds with upstream’s reason', async () => {
    expect(await decide({ name: 'theirs' })).toEqual({ decision: 'deny', reason: "no relationship found between node 'node-1' and this object" });
    expect(await decide({ resource: 'configmaps', name: 'db' })).toMatchObject({ decision: 'deny' });
    expect(await decide({ resource: 'persistentvolumes', namespace: '', name: 'pv-2' })).toMatchObject({ decision: 'deny' });
    expect(await decide({ verb: 'list', name: '' })).toEqual({ decision: 'deny', reason: 'can only get individual resources of this type' });
    expect(await decide({ verb: 'update' })).toEqual({ decision: 'deny', reason: 'can only read resources of this type' });
  });

  it('forgets a pod when it is deleted or moves away', async () => {
    const local = new NodeGraph();
    local.applyPod('/registry/pods/default/a', pod('a', 'node-1', { volumes: [{ name: 's', secret: { secretName: 'shared' } }] }));
    local.applyPod('/registry/pods/default/b', pod('b', 'node-1', { volumes: [{ name: 's', secret: { secretName: 'shared' } }] }));
    local.applyPod('/registry/pods/default/a', undefined);
    expect(local.related('node-1', 'secrets', 'default', 'shared')).toBe(true);
    local.applyPod('/registry/pods/default/b', undefined);
    expect(local.related('node-1', 'secrets', 'default', 'shared')).toBe(false);
  });

  it('asks the store again when the graph has no edge', async () => {
    expect(await authorizeNode(attributes({ name: 'fresh' }), graph, async () => true)).toEqual({ decision: 'allow' });
  });

  it('decides ServiceAccount tokens by the pods’ service accounts', async () => {
    const local = new NodeGraph();
    local.applyPod('/registry/pods/default/a', pod('a', 'node-1', { serviceAccountName: 'builder' }));
    const token = (name: string, verb = 'create') =>
      authorizeNode(attributes({ resource: 'serviceaccounts', subresource: 'token', name, verb }), local, noRecheck);
    expect(await token('builder')).toEqual({ decision: 'allow' });
    expect(await token('admin')).toMatchObject({ decision: 'deny' });
    expect(await token('builder', 'get')).toMatchObject({ decision: 'deny' });
  });

  it('allows the system:node role’s rules and has no opinion on the rest', async () => {
    expect(await decide({ verb: 'patch', resource: 'nodes', subresource: 'status', namespace: '', name: 'node-1' })).toEqual({ decision: 'allow' });
    expect(await decide({ verb: 'update', resource: 'pods', subresource: 'status', name: 'web' })).toEqual({ decision: 'allow' });
    expect(await decide({ verb: 'create', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease' })).toEqual({ decision: 'allow' });
    expect(await decide({ verb: 'create', resource: 'events' })).toEqual({ decision: 'allow' });
    expect(await decide({ verb: 'delete', resource: 'namespaces', namespace: '', name: 'default' })).toBeUndefined();
    expect(await decide({ verb: 'create', apiGroup: 'apps', resource: 'deployments' })).toBeUndefined();
  });

  it('has no opinion about users who are not nodes', async () => {
    expect(await decide({ user: { username: 'system:node:node-1', groups: ['system:authenticated'] } })).toBeUndefined();
    expect(await decide({ user: { username: 'alice', groups: ['system:nodes'] } })).toBeUndefined();
  });
});

describe('node authorizer in a control plane', () => {
  let plane: ControlPlane;
  let node1: ApiClient;
  let node2: ApiClient;

  beforeAll(async () => {
    plane = await startControlPlane([authzNode], { enabled: [], config: { logLevel: 'silent' } });
    const handler = plane.kernel.resolve('apiHandler');
    node1 = createLoopbackClient(handler, nodeUser('node-1'));
    node2 = createLoopbackClient(handler, nodeUser('node-2'));
    for (const name of ['used', 'unused']) await plane.client.create(RESOURCES.secrets, { metadata: { name }, data: { k: 'dg==' } }, 'default');
    await plane.client.create(RESOURCES.configmaps, { metadata: { name: 'settings' }, data: { a: 'b' } }, 'default');
  });
  afterAll(() => plane?.stop());

  it('follows pods as they are bound and deleted, with no delay for the graph', async () => {
    const spec = {
      volumes: [
        { name: 's', secret: { secretName: 'used' } },
        { name: 'c', configMap: { name: 'settings' } },
      ],
    };
    await plane.client.create(RESOURCES.pods, pod('web', 'node-1', spec), 'default');
    // Read right after the write: the store's answer covers a graph that has not seen the event yet.
    expect((await node1.get(RESOURCES.secrets, 'used', 'default')).metadata.name).toBe('used');
    expect((await node1.get(RESOURCES.configmaps, 'settings', 'default')).metadata.name).toBe('settings');
    await expect(node1.get(RESOURCES.secrets, 'unused', 'default')).rejects.toThrow(
      `secrets "unused" is forbidden: User "system:node:node-1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'node-1' and this object`,
    );
    await expect(node2.get(RESOURCES.secrets, 'used', 'default')).rejects.toThrow("no relationship found between node 'node-2'");
    await plane.client.delete(RESOURCES.pods, 'web', 'default', { gracePeriodSeconds: 0 });
    await expect(node1.get(RESOURCES.secrets, 'used', 'default')).rejects.toThrow('forbidden');
  });
});
