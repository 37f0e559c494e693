import type { OwnerReference, Pod } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import { describe, expect, it } from 'vitest';
import { Expectations } from './expectations.js';
import { ownedPodEventHandlers, type PodOwner } from './pod-events.js';

/** A real queue that also remembers what it was asked to do, and when. */
class RecordingQueue extends WorkQueue<string> {
  readonly calls: string[] = [];
  override add(item: string): void {
    this.calls.push(item);
    super.add(item);
  }
  override addAfter(item: string, delayMs: number): void {
    this.calls.push(`${item} after ${delayMs}`);
    super.addAfter(item, delayMs);
  }
}

const owner = (name: string, uid: string, minReadySeconds?: number): PodOwner => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { namespace: 'ns', name, uid },
  spec: minReadySeconds === undefined ? {} : { minReadySeconds },
});

const refTo = (o: PodOwner): OwnerReference => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: o.metadata.name!, uid: o.metadata.uid!, controller: true });

const pod = (name: string, rv: string, extra: { owner?: PodOwner; labels?: Record<string, string>; ready?: boolean; terminating?: boolean } = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    namespace: 'ns',
    name,
    resourceVersion: rv,
    labels: extra.labels ?? { app: 'web' },
    ...(extra.owner ? { ownerReferences: [refTo(extra.owner)] } : {}),
    ...(extra.terminating ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
  },
  spec: { containers: [{ name: 'app', image: 'nginx' }] },
  status: { conditions: [{ type: 'Ready', status: extra.ready ? 'True' : 'False' }] },
});

function setup(owners: PodOwner[]) {
  const queue = new RecordingQueue({ name: 'test' });
  const expectations = new Expectations();
  const handlers = ownedPodEventHandlers({
    queue,
    expectations,
    resolveControllerRef: (namespace, ref) =>
      owners.find((o) => o.metadata.namespace === namespace && o.metadata.name === ref.name && o.metadata.uid === ref.uid),
    selecting: (p) => owners.filter((o) => p.metadata.labels?.app === o.metadata.name),
    isPodReady: (p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
  });
  return { queue, expectations, handlers };
}

describe('ownedPodEventHandlers', () => {
  it('wakes the owner of a new pod and counts the creation as seen', () => {
    const web = owner('web', 'u1');
    const { queue, expectations, handlers } = setup([web]);
    expectations.expectCreations('ns/web', 1);
    handlers.add(pod('web-a', '1', { owner: web }));
    expect(queue.calls).toEqual(['ns/web']);
    expect(expectations.satisfied('ns/web')).toBe(true);
  });

  it('ignores a pod whose controller is gone or was replaced (another uid)', () => {
    const web = owner('web', 'u1');
    const { queue, handlers } = setup([web]);
    handlers.add(pod('web-a', '1', { owner: owner('web', 'old-uid') }));
    expect(queue.calls).toEqual([]);
  });

  it('wakes every owner that could adopt an orphan', () => {
    const { queue, handlers } = setup([owner('web', 'u1'), owner('db', 'u2')]);
    handlers.add(pod('stray', '1', { labels: { app: 'web' } }));
    expect(queue.calls).toEqual(['ns/web']);
  });

  it('counts a pod that is terminating when first seen, or starts terminating, as deleted', () => {
    const web = owner('web', 'u1');
    const { queue, expectations, handlers } = setup([web]);
    expectations.expectDeletions('ns/web', ['ns/web-a', 'ns/web-b']);
    handlers.add(pod('web-a', '1', { owner: web, terminating: true }));
    expect(expectations.satisfied('ns/web')).toBe(false);
    handlers.update(pod('web-b', '1', { owner: web }), pod('web-b', '2', { owner: web, terminating: true }));
    expect(expectations.satisfied('ns/web')).toBe(true);
    expect(queue.calls).toEqual(['ns/web', 'ns/web']);
  });

  it('skips a resync that changed nothing', () => {
    const web = owner('web', 'u1');
    const { queue, handlers } = setup([web]);
    handlers.update(pod('web-a', '1', { owner: web }), pod('web-a', '1', { owner: web }));
    expect(queue.calls).toEqual([]);
  });

  it('wakes both the old and the new controller when a pod changes hands', () => {
    const web = owner('web', 'u1');
    const api = owner('api', 'u2');
    const { queue, handlers } = setup([web, api]);
    handlers.update(pod('p', '1', { owner: web }), pod('p', '2', { owner: api }));
    expect(queue.calls).toEqual(['ns/web', 'ns/api']);
  });

  it('wakes possible adopters of a released pod, and of an orphan whose labels changed', () => {
    const web = owner('web', 'u1');
    const { queue, handlers } = setup([web, owner('api', 'u2')]);
    handlers.update(pod('p', '1', { owner: web }), pod('p', '2', { labels: { app: 'web' } }));
    expect(queue.calls).toEqual(['ns/web', 'ns/web']);
    queue.calls.length = 0;
    handlers.update(pod('q', '1', { labels: { app: 'web' } }), pod('q', '2', { labels: { app: 'api' } }));
    expect(queue.calls).toEqual(['ns/api']);
    queue.calls.length = 0;
    handlers.update(pod('q', '2', { labels: { app: 'api' } }), pod('q', '3', { labels: { app: 'api' } }));
    expect(queue.calls).toEqual([]);
  });

  it('wakes an owner with minReadySeconds again once a pod that just turned ready is available', () => {
    const web = owner('web', 'u1', 10);
    const { queue, handlers } = setup([web]);
    handlers.update(pod('web-a', '1', { owner: web }), pod('web-a', '2', { owner: web, ready: true }));
    expect(queue.calls).toEqual(['ns/web', 'ns/web after 11000']);
    queue.shutDown();
  });

  it('counts a deleted pod and wakes its owner', () => {
    const web = owner('web', 'u1');
    const { queue, expectations, handlers } = setup([web]);
    expectations.expectDeletions('ns/web', ['ns/web-a']);
    handlers.delete(pod('web-a', '3', { owner: web }));
    expect(expectations.satisfied('ns/web')).toBe(true);
    expect(queue.calls).toEqual(['ns/web']);
  });
});
