import { ApiError, type Namespace } from '@skiff/api';
import { WorkQueue } from '@skiff/client';
import type { ApiClient, Informer, InformerHandlers } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { enqueueActiveNamespaces, isNamespaceActive, isNamespaceActiveLive } from './active-namespaces.js';

const namespace = (name: string, state: 'active' | 'deleting' | 'terminating' = 'active'): Namespace => ({
  metadata: { name, ...(state === 'deleting' && { deletionTimestamp: '2024-01-01T00:00:00Z' }) },
  status: { phase: state === 'terminating' ? 'Terminating' : 'Active' },
});

describe('active namespaces', () => {
  it('counts a namespace as active until it is being deleted', () => {
    expect(isNamespaceActive(namespace('a'))).toBe(true);
    expect(isNamespaceActive(namespace('a', 'deleting'))).toBe(false);
    expect(isNamespaceActive(namespace('a', 'terminating'))).toBe(false);
    expect(isNamespaceActive(undefined)).toBe(false);
  });

  it('asks the API server when the cache may lag: a namespace it no longer has is not active', async () => {
    const live = new Map([
      ['kept', namespace('kept')],
      ['going', namespace('going', 'terminating')],
    ]);
    const client = {
      get: async (_type: unknown, name: string) => {
        const found = live.get(name);
        if (!found) throw new ApiError('SKIFF_ERR_API_NOT_FOUND', `namespaces "${name}" not found`);
        return found;
      },
    } as unknown as ApiClient;
    expect(await isNamespaceActiveLive(client, 'kept')).toBe(true);
    expect(await isNamespaceActiveLive(client, 'going')).toBe(false);
    expect(await isNamespaceActiveLive(client, 'gone')).toBe(false);
  });

  it('queues namespaces by name when they appear or change while active', () => {
    let handlers: InformerHandlers<Namespace> = {};
    const informer = { addHandlers: (h: InformerHandlers<Namespace>) => (handlers = h) } as unknown as Informer<Namespace>;
    const queue = new WorkQueue<string>({ name: 'test' });
    enqueueActiveNamespaces(informer, queue);
    handlers.add!(namespace('a'));
    handlers.add!(namespace('b', 'terminating'));
    handlers.update!(namespace('c'), namespace('c', 'deleting'));
    handlers.update!(namespace('d'), namespace('d'));
    expect(queue.len()).toBe(2);
    queue.shutDown();
  });
});
