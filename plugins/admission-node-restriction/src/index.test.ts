import { describe, expect, it } from 'vitest';
import { Kernel, type AdmissionRequest } from '@skiff/kernel';
import type { KubeObject, Lease, Node, PersistentVolumeClaim, Pod, Taint } from '@skiff/api';
import { admissionRequest, admit } from '@skiff/testing';
import plugin, { forbiddenForNodes } from './index.js';
import { NodeRestrictionError } from './errors.js';

const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
const NODE_1 = { username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] };
const ADMIN = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

const node = (name: string, labels: Record<string, string> = {}, taints?: Taint[]): Node =>
  ({ apiVersion: 'v1', kind: 'Node', metadata: { name, uid: `uid-${name}`, labels }, spec: taints ? { taints } : {} }) as Node;

const pod = (name: string, nodeName: string | undefined, extra: Partial<Pod['spec']> = {}, metadata: Partial<Pod['metadata']> = {}): Pod =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...metadata },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...(nodeName && { nodeName }), ...extra },
  }) as Pod;

const stored: KubeObject[] = [node('node-1'), node('node-2'), pod('mine', 'node-1'), pod('theirs', 'node-2')];

const resource = (resource: string, group = '') => ({ resource: { group, version: 'v1', resource } });

function request(overrides: Partial<AdmissionRequest>): AdmissionRequest {
  return admissionRequest({ user: NODE_1, objects: stored, ...overrides });
}

async function refusal(overrides: Partial<AdmissionRequest>): Promise<NodeRestrictionError> {
  const err = await admit(kernel, request(overrides)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NodeRestrictionError);
  return err as NodeRestrictionError;
}

/** Admits the request; a refusal fails the test with its message. */
async function allowed(overrides: Partial<AdmissionRequest>): Promise<void> {
  await admit(kernel, request(overrides));
}

describe('NodeRestriction: nodes', () => {
  it('lets a node write its own Node, and refuses another node, in upstream’s words', async () => {
    await allowed({ ...resource('nodes'), operation: 'UPDATE', name: 'node-1', object: node('node-1'), oldObject: node('node-1') });
    await allowed({ ...resource('nodes'), operation: 'UPDATE', subresource: 'status', name: 'node-1', object: node('node-1'), oldObject: node('node-1') });
    const err = await refusal({ ...resource('nodes'), operation: 'UPDATE', name: 'node-2', object: node('node-2'), oldObject: node('node-2') });
    expect(err.message).toBe('nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"');
    expect(err.status).toBe(403);
    await expect(refusal({ ...resource('nodes'), operation: 'DELETE', name: 'node-2', oldObject: node('node-2') })).resolves.toBeDefined();
    await expect(refusal({ ...resource('nodes'), operation: 'CREATE', name: 'node-3', object: node('node-3') })).resolves.toBeDefined();
  });

  it('refuses restricted labels at registration and on update, and lets the kubelet’s own labels change', async () => {
    const create = await refusal({
      ...resource('nodes'),
      operation: 'CREATE',
      name: 'node-1',
      object: node('node-1', { 'node-restriction.kubernetes.io/trusted': 'yes', 'example.com/team': 'a' }),
    });
    expect(create.message).toBe(
      'nodes "node-1" is forbidden: node "node-1" is not allowed to set the following labels: node-restriction.kubernetes.io/trusted',
    );
    const update = await refusal({
      ...resource('nodes'),
      operation: 'UPDATE',
      name: 'node-1',
      object: node('node-1', { 'team.node-restriction.kubernetes.io/x': '1', 'node-role.kubernetes.io/control-plane': '' }),
      oldObject: node('node-1'),
    });
    expect(update.message).toBe(
      'nodes "node-1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane, team.node-restriction.kubernetes.io/x',
    );
    const removed = await refusal({
      ...resource('nodes'),
      operation: 'UPDATE',
      name: 'node-1',
      object: node('node-1'),
      oldObject: node('node-1', { 'node-restriction.kubernetes.io/trusted': 'yes' }),
    });
    expect(removed.message).toMatch(/is not allowed to modify labels: node-restriction.kubernetes.io\/trusted$/);
    await allowed({
      ...resource('nodes'),
      operation: 'UPDATE',
      name: 'node-1',
      object: node('node-1', { 'kubernetes.io/hostname': 'node-1', 'node.kubernetes.io/instance-type': 'big', 'example.com/x': 'y' }),
      oldObject: node('node-1'),
    });
  });

  it('refuses a node changing its taints, and lets it register with them', async () => {
    const taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
    const err = await refusal({ ...resource('nodes'), operation: 'UPDATE', name: 'node-1', object: node('node-1'), oldObject: node('node-1', {}, [taint]) });
    expect(err.message).toBe('nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints');
    await allowed({ ...resource('nodes'), operation: 'CREATE', name: 'node-1', object: node('node-1', {}, [taint]) });
  });

  it('classifies labels as upstream does', () => {
    expect(
      ['node-restriction.kubernetes.io/a', 'a.node-restriction.kubernetes.io/b', 'kubernetes.io/role', 'k8s.io/x', 'x.k8s.io/y'].map(forbiddenForNodes),
    ).toEqual([true, true, true, true, true]);
    expect(
      ['kubernetes.io/hostname', 'topology.kubernetes.io/zone', 'kubelet.kubernetes.io/x', 'a.node.kubernetes.io/b', 'example.com/x', 'plain'].map(
        forbiddenForNodes,
      ),
    ).toEqual([false, false, false, false, false, false]);
  });
});

describe('NodeRestriction: pods', () => {
  it('lets a node update the status of its own pods only, without relabelling them', async () => {
    await allowed({
      ...resource('pods'),
      operation: 'UPDATE',
      subresource: 'status',
      name: 'mine',
      object: pod('mine', 'node-1'),
      oldObject: pod('mine', 'node-1'),
    });
    const other = await refusal({
      ...resource('pods'),
      operation: 'UPDATE',
      subresource: 'status',
      name: 'theirs',
      object: pod('theirs', 'node-2'),
      oldObject: pod('theirs', 'node-2'),
    });
    expect(other.message).toBe('pods "theirs" is forbidden: node "node-1" can only update pod status for pods with spec.nodeName set to itself');
    const relabel = await refusal({
      ...resource('pods'),
      operation: 'UPDATE',
      subresource: 'status',
      name: 'mine',
      object: pod('mine', 'node-1', {}, { labels: { app: 'x' } }),
      oldObject: pod('mine', 'node-1'),
    });
    expect(relabel.message).toBe('pods "mine" is forbidden: node "node-1" cannot update labels through pod status');
  });

  it('lets a node delete its own pods only, and never update a pod', async () => {
    await allowed({ ...resource('pods'), operation: 'DELETE', name: 'mine', oldObject: pod('mine', 'node-1') });
    const err = await refusal({ ...resource('pods'), operation: 'DELETE', name: 'theirs', oldObject: pod('theirs', 'node-2') });
    expect(err.message).toBe('pods "theirs" is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself');
    const update = await refusal({ ...resource('pods'), operation: 'UPDATE', name: 'mine', object: pod('mine', 'node-1'), oldObject: pod('mine', 'node-1') });
    expect(update.message).toBe('pods "mine" is forbidden: unexpected operation "UPDATE", node "node-1" can only create and delete mirror pods');
    const other = await refusal({
      ...resource('pods'),
      operation: 'UPDATE',
      subresource: 'ephemeralcontainers',
      name: 'mine',
      object: pod('mine', 'node-1'),
      oldObject: pod('mine', 'node-1'),
    });
    expect(other.message).toBe(`pods "mine" is forbidden: unexpected pod subresource "ephemeralcontainers", only 'status' and 'eviction' are allowed`);
    // exec, attach, port-forward and proxy (CONNECT) are authorization's to judge: upstream's plugin handles writes only.
    await allowed({ ...resource('pods'), operation: 'CONNECT', subresource: 'exec', name: 'mine' });
  });

  it('lets a node evict its own pods only', async () => {
    const eviction = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } }) as KubeObject;
    await allowed({ ...resource('pods'), operation: 'CREATE', subresource: 'eviction', name: 'mine', object: eviction('mine') });
    const err = await refusal({ ...resource('pods'), operation: 'CREATE', subresource: 'eviction', name: 'theirs', object: eviction('theirs') });
    expect(err.message).toBe('pods "theirs" is forbidden: node node-1 can only evict pods with spec.nodeName set to itself');
  });

  it('lets a node create only mirror pods bound to itself, owned by its Node, using no API objects', async () => {
    const mirror = (extra: Partial<Pod['spec']> = {}, metadata: Partial<Pod['metadata']> = {}, nodeName = 'node-1') =>
      pod('static-web-node-1', nodeName, extra, {
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'uid-node-1', controller: true }],
        ...metadata,
      });
    const create = (object: Pod) => ({ ...resource('pods'), operation: 'CREATE' as const, name: object.metadata.name!, object });
    await allowed(create(mirror()));
    const cases: [Pod, string][] = [
      [pod('plain', 'node-1'), 'pod does not have "kubernetes.io/config.mirror" annotation, node "node-1" can only create mirror pods'],
      [mirror({}, {}, 'node-2'), 'node "node-1" can only create pods with spec.nodeName set to itself'],
      [mirror({}, { ownerReferences: [] }), 'node "node-1" can only create pods with an owner reference set to itself'],
      [
        mirror({}, { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-2', uid: 'uid-node-2', controller: true }] }),
        'node "node-1" can only create pods with an owner reference set to itself',
      ],
      [
        mirror({}, { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'uid-node-1' }] }),
        'node "node-1" can only create pods with a controller owner reference set to itself',
      ],
      [
        mirror({}, { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'stale', controller: true }] }),
        'node node-1 UID mismatch: expected uid-node-1 got stale',
      ],
      [mirror({ serviceAccountName: 'default' }), 'node "node-1" can not create pods that reference a service account'],
      [mirror({ volumes: [{ name: 's', secret: { secretName: 'creds' } }] }), 'node "node-1" can not create pods that reference secrets'],
      [
        mirror({ containers: [{ name: 'app', image: 'nginx', envFrom: [{ configMapRef: { name: 'settings' } }] }] }),
        'node "node-1" can not create pods that reference configmaps',
      ],
      [
        mirror({ volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] }),
        'node "node-1" can not create pods that reference persistentvolumeclaims',
      ],
    ];
    for (const [object, message] of cases) expect((await refusal(create(object))).message).toBe(`pods "${object.metadata.name}" is forbidden: ${message}`);
  });
});

describe('NodeRestriction: tokens, leases, claims', () => {
  const tokenRequest = (boundObjectRef?: object) =>
    ({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {},
      spec: { audiences: [], ...(boundObjectRef && { boundObjectRef }) },
    }) as KubeObject;
  const token = (boundObjectRef?: object) => ({
    ...resource('serviceaccounts'),
    operation: 'CREATE' as const,
    subresource: 'token',
    name: 'default',
    object: tokenRequest(boundObjectRef),
  });

  it('lets a node request tokens bound to its own pods only', async () => {
    await allowed(token({ apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'uid-mine' }));
    const cases: [object | undefined, string][] = [
      [undefined, 'node requested token not bound to a pod'],
      [{ apiVersion: 'v1', kind: 'Secret', name: 'mine', uid: 'uid-mine' }, 'node requested token not bound to a pod'],
      [{ apiVersion: 'v1', kind: 'Pod', name: 'mine' }, 'node requested token with a pod binding without a uid'],
      [
        { apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'old' },
        'the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated',
      ],
      [{ apiVersion: 'v1', kind: 'Pod', name: 'theirs', uid: 'uid-theirs' }, 'node requested token bound to a pod scheduled on a different node'],
    ];
    for (const [ref, message] of cases) expect((await refusal(token(ref))).message).toBe(`serviceaccounts "default" is forbidden: ${message}`);
    await expect(admit(kernel, request(token({ apiVersion: 'v1', kind: 'Pod', name: 'gone', uid: 'x' })))).rejects.toThrow('pods "gone" not found');
  });

  it('lets a node write its own Lease in kube-node-lease only', async () => {
    const lease = (name: string, namespace = 'kube-node-lease') =>
      ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace } }) as Lease;
    const leases = (operation: AdmissionRequest['operation'], object: Lease) => ({
      ...resource('leases', 'coordination.k8s.io'),
      operation,
      namespace: object.metadata.namespace!,
      name: object.metadata.name!,
      object,
    });
    await allowed(leases('CREATE', lease('node-1')));
    await allowed(leases('UPDATE', lease('node-1')));
    expect((await refusal(leases('UPDATE', lease('node-2')))).message).toBe(
      'leases.coordination.k8s.io "node-2" is forbidden: can only access node lease with the same name as the requesting node',
    );
    expect((await refusal(leases('CREATE', lease('node-1', 'default')))).message).toBe(
      'leases.coordination.k8s.io "node-1" is forbidden: can only access leases in the "kube-node-lease" system namespace',
    );
  });

  it('lets a node change only the capacity and conditions in a claim’s status', async () => {
    const claim = (status: PersistentVolumeClaim['status'], labels?: Record<string, string>) =>
      ({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', namespace: 'default', resourceVersion: '5', labels },
        spec: {},
        status,
      }) as PersistentVolumeClaim;
    const update = (object: PersistentVolumeClaim, subresource = 'status') => ({
      ...resource('persistentvolumeclaims'),
      operation: 'UPDATE' as const,
      subresource,
      name: 'data',
      object,
      oldObject: claim({ phase: 'Bound', capacity: { storage: '1Gi' } }),
    });
    await allowed(update(claim({ phase: 'Bound', capacity: { storage: '2Gi' } })));
    expect((await refusal(update(claim({ phase: 'Lost' })))).message).toBe(
      'persistentvolumeclaims "data" is forbidden: node "node-1" is not allowed to update fields other than status.capacity and status.conditions: status.phase',
    );
    expect((await refusal(update(claim({ phase: 'Bound' }, { a: 'b' }), ''))).message).toBe(
      'persistentvolumeclaims "data" is forbidden: may only update PVC status',
    );
  });

  it('leaves everyone else alone, and refuses a node user without a name', async () => {
    await expect(
      admit(kernel, request({ ...resource('nodes'), user: ADMIN, operation: 'UPDATE', name: 'node-2', object: node('node-2'), oldObject: node('node-2') })),
    ).resolves.toBeDefined();
    // In the group but without the prefix, or with the prefix but not in the group: not a node.
    await expect(
      admit(kernel, request({ ...resource('nodes'), user: { username: 'kubelet', groups: ['system:nodes'] }, operation: 'DELETE', name: 'node-2' })),
    ).resolves.toBeUndefined();
    await expect(
      admit(kernel, request({ ...resource('nodes'), user: { username: 'system:node:node-1', groups: [] }, operation: 'DELETE', name: 'node-2' })),
    ).resolves.toBeUndefined();
    const nameless = await refusal({ ...resource('configmaps'), user: { username: 'system:node:', groups: ['system:nodes'] }, operation: 'DELETE', name: 'x' });
    expect(nameless.message).toBe('configmaps "x" is forbidden: could not determine node from user "system:node:"');
    await allowed({ ...resource('configmaps'), operation: 'DELETE', name: 'x' });
  });
});
