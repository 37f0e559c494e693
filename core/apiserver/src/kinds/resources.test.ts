import type { Deployment, KubeObject, Namespace, Node, Pod, ReplicaSet } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { builtinResources } from './index.js';
import { podQOSClass } from './core/index.js';
import { kindHarness } from '../test-support/kind-harness.js';

// By plural; the first group wins (core v1 events before events.k8s.io's).
const harness = kindHarness(builtinResources());
const { NOW, CREATED, definition, create } = harness;

/** The row at NOW, with a cell for every column. */
const cells = (resource: string, object: KubeObject) => {
  const row = harness.cells(resource, object);
  expect(row).toHaveLength(definition(resource).table!.columns.length);
  return row;
};

const deploymentBody = {
  kind: 'Deployment',
  apiVersion: 'apps/v1',
  metadata: { name: 'nginx', namespace: 'default', creationTimestamp: null, labels: { app: 'nginx' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'nginx' } },
    template: {
      metadata: { creationTimestamp: null, labels: { app: 'nginx' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', resources: {} }] },
    },
    strategy: {},
  },
  status: {},
};

describe('builtinResources', () => {
  it('serves the built-in kinds with kubectl’s names, scopes and subresources', () => {
    const rows = builtinResources().map((d) => [
      d.group,
      d.version,
      d.resource,
      d.kind,
      d.listKind,
      d.singular,
      d.namespaced,
      d.shortNames,
      d.categories,
      d.subresources,
    ]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['', 'v1', 'namespaces', 'Namespace', 'NamespaceList', 'namespace', false, ['ns'], undefined, ['status', 'finalize']],
        ['', 'v1', 'nodes', 'Node', 'NodeList', 'node', false, ['no'], undefined, ['status', 'proxy']],
        [
          '',
          'v1',
          'pods',
          'Pod',
          'PodList',
          'pod',
          true,
          ['po'],
          ['all'],
          ['status', 'binding', 'eviction', 'log', 'exec', 'attach', 'portforward', 'proxy', 'ephemeralcontainers', 'resize'],
        ],
        ['', 'v1', 'events', 'Event', 'EventList', 'event', true, ['ev'], undefined, undefined],
        ['apps', 'v1', 'deployments', 'Deployment', 'DeploymentList', 'deployment', true, ['deploy'], ['all'], ['status', 'scale']],
        ['apps', 'v1', 'replicasets', 'ReplicaSet', 'ReplicaSetList', 'replicaset', true, ['rs'], ['all'], ['status', 'scale']],
        ['coordination.k8s.io', 'v1', 'leases', 'Lease', 'LeaseList', 'lease', true, undefined, undefined, undefined],
      ]),
    );
    // Every kind is declared once: no group/version/resource twice.
    expect(new Set(rows.map(([group, version, resource]) => `${group}/${version}/${resource}`)).size).toBe(rows.length);
    for (const d of builtinResources()) {
      expect(d.verbs!.length).toBeGreaterThan(0);
      expect(d.table!.columns.filter((c) => c.format === 'name')).toHaveLength(1);
    }
  });

  it('decodes: type errors fail, unknown fields are reported for the server to judge and dropped', () => {
    const body = structuredClone(deploymentBody) as Record<string, any>;
    body.spec.replicas = 'three';
    body.spec.paused2 = true;
    const result = definition('deployments').decode!(body, true);
    expect(result.errors.map((e) => e.message)).toEqual(['json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32']);
    expect(result.unknownFields).toEqual(['spec.paused2']);
    expect(body.spec.paused2).toBeUndefined();
  });
});

describe('pods', () => {
  const runBody = {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name: 'nginx', namespace: 'default', creationTimestamp: null, labels: { run: 'nginx' } },
    spec: { containers: [{ name: 'nginx', image: 'nginx', resources: {} }], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
    status: {},
  };

  it('accepts `kubectl run` and starts the pod Pending with its QoS class', () => {
    const pod = create('pods', runBody) as Pod;
    expect(pod.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
    expect(pod.metadata.creationTimestamp).toBe(CREATED);
    expect(cells('pods', pod)).toEqual(['nginx', '0/1', 'Pending', '0', '3h5m', '<none>', '<none>', '<none>', '<none>']);
  });

  it('keeps the stored status on spec updates and the stored spec on status updates', () => {
    const old = create('pods', runBody) as Pod;
    old.spec.nodeName = 'node-1';
    old.status = { phase: 'Running', podIP: '10.0.0.9' };
    const update = structuredClone(old);
    update.spec.containers[0]!.image = 'nginx:1.26';
    update.status = { phase: 'Failed' };
    definition('pods').prepareForUpdate!(update, old, '');
    expect(update.status).toEqual({ phase: 'Running', podIP: '10.0.0.9' });
    expect(update.spec.containers[0]!.image).toBe('nginx:1.26');

    const statusUpdate = structuredClone(old);
    statusUpdate.spec.nodeName = 'node-2';
    statusUpdate.status = { phase: 'Succeeded' };
    statusUpdate.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: 'x', uid: 'y' }];
    statusUpdate.metadata.labels = { run: 'nginx', done: 'yes' };
    definition('pods').prepareForUpdate!(statusUpdate, old, 'status');
    expect(statusUpdate.spec.nodeName).toBe('node-1');
    expect(statusUpdate.status).toEqual({ phase: 'Succeeded' });
    expect(statusUpdate.metadata.ownerReferences).toBeUndefined();
    expect(statusUpdate.metadata.labels).toEqual({ run: 'nginx', done: 'yes' });
    // The stored object is never shared with the update.
    expect(update.status).not.toBe(old.status);
  });

  it('selects by the fields Kubernetes indexes, unset ones reading as ""', () => {
    const pod = create('pods', runBody) as Pod;
    const fields = definition('pods').fieldSelectors!;
    expect(fields['spec.nodeName']!(pod)).toBe('');
    expect(fields['status.phase']!(pod)).toBe('Pending');
    expect(fields['spec.schedulerName']!(pod)).toBe('default-scheduler');
    expect(fields['spec.restartPolicy']!(pod)).toBe('Always');
    expect(fields['spec.hostNetwork']!(pod)).toBe('false');
    pod.status = { podIPs: [{ ip: '10.0.0.3' }], podIP: '10.0.0.3' };
    expect(fields['status.podIP']!(pod)).toBe('10.0.0.3');
  });

  it('computes the QoS class from CPU and memory requests and limits', () => {
    const withResources = (resources: object) => ({ spec: { containers: [{ name: 'c', resources }] } }) as unknown as Pod;
    expect(podQOSClass(withResources({}))).toBe('BestEffort');
    expect(podQOSClass(withResources({ requests: { cpu: '100m' } }))).toBe('Burstable');
    expect(podQOSClass(withResources({ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1Gi' } }))).toBe('Guaranteed');
    expect(podQOSClass(withResources({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } }))).toBe('Burstable');
    expect(podQOSClass(withResources({ limits: { 'example.com/gpu': '1' } }))).toBe('BestEffort');
  });
});

describe('deployments and replicasets', () => {
  it('accepts `kubectl create deployment`, resets status and prints the row', () => {
    const deployment = create('deployments', deploymentBody) as Deployment;
    expect(deployment.status).toEqual({});
    expect(deployment.spec.strategy?.rollingUpdate).toEqual({ maxUnavailable: '25%', maxSurge: '25%' });
    deployment.status = { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 };
    expect(cells('deployments', deployment)).toEqual(['nginx', '2/3', 3, 2, '3h5m', 'nginx', 'nginx:1.25', 'app=nginx']);
  });

  it('keeps labels and spec on status updates', () => {
    const old = create('deployments', deploymentBody) as Deployment;
    const next = structuredClone(old);
    next.metadata.labels = { app: 'other' };
    next.spec.replicas = 10;
    next.status = { observedGeneration: 1, replicas: 3 };
    definition('deployments').prepareForUpdate!(next, old, 'status');
    expect(next.metadata.labels).toEqual({ app: 'nginx' });
    expect(next.spec.replicas).toBe(3);
    expect(next.status).toEqual({ observedGeneration: 1, replicas: 3 });
  });

  it('leaves a scale write as its handler built it from the stored object, and keeps status on main updates', () => {
    const old = create('deployments', deploymentBody) as Deployment;
    old.status = { replicas: 3 };
    const scaled = structuredClone(old);
    scaled.spec.replicas = 5;
    definition('deployments').prepareForUpdate!(scaled, old, 'scale');
    expect(scaled.spec.replicas).toBe(5);
    expect(scaled.status).toEqual({ replicas: 3 });
    const updated = structuredClone(old);
    updated.status = { replicas: 9 };
    definition('deployments').prepareForUpdate!(updated, old, '');
    expect(updated.status).toEqual({ replicas: 3 });
  });

  it('prints a replica set and selects it by status.replicas', () => {
    const body = {
      metadata: { name: 'nginx-7c5ddbdf54', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: {
          matchLabels: { app: 'nginx', 'pod-template-hash': '7c5ddbdf54' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'api'] }],
        },
        template: {
          metadata: { labels: { app: 'nginx', 'pod-template-hash': '7c5ddbdf54', tier: 'web' } },
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.25' },
              { name: 'log', image: 'busybox' },
            ],
          },
        },
      },
    };
    const replicaSet = create('replicasets', body) as ReplicaSet;
    expect(replicaSet.status).toEqual({ replicas: 0 });
    expect(definition('replicasets').fieldSelectors!['status.replicas']!(replicaSet)).toBe('0');
    replicaSet.status = { replicas: 2, readyReplicas: 1 };
    expect(cells('replicasets', replicaSet)).toEqual([
      'nginx-7c5ddbdf54',
      2,
      2,
      1,
      '3h5m',
      'nginx,log',
      'nginx:1.25,busybox',
      'app=nginx,pod-template-hash=7c5ddbdf54,tier in (api,web)',
    ]);
  });
});

describe('namespaces', () => {
  it('creates Active with the kubernetes finalizer and the name label', () => {
    const namespace = create('namespaces', { metadata: { name: 'test' }, spec: {}, status: {} }) as Namespace;
    expect(namespace.status).toEqual({ phase: 'Active' });
    expect(namespace.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(namespace.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'test' });
    expect(cells('namespaces', namespace)).toEqual(['test', 'Active', '3h5m']);
    expect(definition('namespaces').fieldSelectors!['status.phase']!(namespace)).toBe('Active');
  });

  it('changes spec.finalizers only through the finalize subresource', () => {
    const old = create('namespaces', { metadata: { name: 'test' } }) as Namespace;
    const update = structuredClone(old);
    update.spec = { finalizers: [] };
    definition('namespaces').prepareForUpdate!(update, old, '');
    expect(update.spec).toEqual({ finalizers: ['kubernetes'] });
    const finalize = structuredClone(old);
    finalize.spec = { finalizers: [] };
    definition('namespaces').prepareForUpdate!(finalize, old, 'finalize');
    expect(finalize.spec).toEqual({ finalizers: [] });
  });
});

describe('nodes', () => {
  const nodeBody = {
    metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'worker' } },
    spec: { unschedulable: true },
    status: {
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'Hostname', address: 'node-1' },
      ],
      nodeInfo: { kubeletVersion: 'v1.30.0-skiff', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'simulated://0.1.0' },
    },
  };

  it('keeps the status a kubelet registers with, and prints Status, Roles and wide columns', () => {
    const node = create('nodes', nodeBody) as Node;
    expect(node.status?.allocatable).toEqual({ cpu: '4', memory: '8Gi', pods: '110' });
    expect(cells('nodes', node)).toEqual([
      'node-1',
      'Ready,SchedulingDisabled',
      'control-plane,worker',
      '3h5m',
      'v1.30.0-skiff',
      '10.0.0.1',
      '<none>',
      'Debian GNU/Linux 12',
      '<unknown>',
      'simulated://0.1.0',
    ]);
    expect(definition('nodes').fieldSelectors!['spec.unschedulable']!(node)).toBe('true');
  });

  it('prints NotReady and Unknown, and <none> without roles', () => {
    const node = create('nodes', { metadata: { name: 'node-2' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }) as Node;
    expect(cells('nodes', node).slice(1, 3)).toEqual(['NotReady', '<none>']);
    delete node.status;
    expect(cells('nodes', node).slice(1, 3)).toEqual(['Unknown', '<none>']);
  });
});

describe('events and leases', () => {
  it('prints an event like `kubectl get events -o wide` and selects by involvedObject', () => {
    const event = create('events', {
      metadata: { name: 'web-1.17c8a', namespace: 'default' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u-1', apiVersion: 'v1', fieldPath: 'spec.containers{web}' },
      reason: 'Pulled',
      message: 'Container image "nginx" already present on machine\n',
      type: 'Normal',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: new Date(NOW - 600_000).toISOString(),
      lastTimestamp: new Date(NOW - 30_000).toISOString(),
      count: 4,
    });
    expect(cells('events', event)).toEqual([
      '30s',
      'Normal',
      'Pulled',
      'pod/web-1',
      'spec.containers{web}',
      'kubelet, node-1',
      'Container image "nginx" already present on machine',
      '10m',
      4,
      'web-1.17c8a',
    ]);
    const fields = definition('events').fieldSelectors!;
    expect(fields['involvedObject.uid']!(event)).toBe('u-1');
    expect(fields['involvedObject.kind']!(event)).toBe('Pod');
    expect(fields.source!(event)).toBe('kubelet');
    expect(fields.type!(event)).toBe('Normal');
  });

  it('prints a lease with its holder', () => {
    const lease = create('leases', {
      metadata: { name: 'kube-scheduler', namespace: 'kube-system' },
      spec: { holderIdentity: 'scheduler-1', leaseDurationSeconds: 15 },
    });
    expect(cells('leases', lease)).toEqual(['kube-scheduler', 'scheduler-1', '3h5m']);
  });
});
