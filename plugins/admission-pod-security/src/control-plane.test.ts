import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Namespace, type Pod } from '@skiff/api';
import { definePlugin, type AuditEvent } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin from './index.js';

// The plugin in a real control plane (LMDB store, API server, loopback client): what it records reaches the audit
// event, and a namespace's new enforce level is checked against the pods stored in it.

const audited: AuditEvent[] = [];
const warned = new Map<string, string[]>();

/** Sees the audit events, and the warnings admission gathered for namespace writes (after every other tap). */
const observer = definePlugin({
  name: 'pod-security-observer',
  version: '0.0.0',
  kernel: '*',
  apply(kernel) {
    kernel.hooks.audit.tap('pod-security-observer', (event) => {
      if (event.stage === 'ResponseComplete') audited.push(event);
    });
    kernel.hooks.validate.tapPromise({ name: 'pod-security-observer', stage: 10_000 }, async (request) => {
      if (request.resource.resource === 'namespaces') warned.set(request.name, [...(request.warnings ?? [])]);
    });
  },
});

const namespace = (name: string, labels: Record<string, string> = {}): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const pod = (name: string, securityContext: Record<string, unknown> = {}): Pod =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', securityContext }] } }) as Pod;

describe('pod security in a control plane', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane([plugin, observer], { enabled: [] });
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it("puts audit-mode violations and the enforced policy in the request's audit event", async () => {
    await plane.client.create(RESOURCES.namespaces, namespace('audited', { 'pod-security.kubernetes.io/audit': 'baseline' }));
    await plane.client.create(RESOURCES.pods, pod('priv', { privileged: true }), 'audited');
    const event = await waitFor('the audit event of the pod create', () =>
      audited.find((e) => e.verb === 'create' && e.objectRef?.resource === 'pods' && e.requestObject?.metadata.name === 'priv'),
    );
    expect(event.annotations).toEqual({
      'pod-security.kubernetes.io/enforce-policy': 'privileged:latest',
      'pod-security.kubernetes.io/audit-violations':
        'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    });
  });

  it("checks a namespace's stored pods when its enforce label gets stricter", async () => {
    await plane.client.create(RESOURCES.namespaces, namespace('team'));
    await plane.client.create(RESOURCES.pods, pod('b-priv', { privileged: true }), 'team');
    await plane.client.create(RESOURCES.pods, pod('a-priv', { privileged: true }), 'team');
    await plane.client.create(RESOURCES.pods, pod('plain'), 'team');
    await plane.client.patch(RESOURCES.namespaces, 'team', { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } });
    expect(warned.get('team')).toEqual([
      'existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"',
      'a-priv (and 1 other pod): privileged',
    ]);
    await expect(plane.client.create(RESOURCES.pods, pod('c-priv', { privileged: true }), 'team')).rejects.toThrow(
      'pods "c-priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    );
  });
});
