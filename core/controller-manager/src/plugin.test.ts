import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type Event, type Namespace } from '@skiff/api';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import { definePlugin, Kernel, waitFor, type ControllerContext } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';
import { afterEach, describe, expect, it } from 'vitest';
import controllerManager from './plugin.js';

/** A small real controller: records an event for every namespace it sees, with a worker that finishes after stop. */
function namespaceWatcher(name: string, log: { contexts: ControllerContext[]; finished: string[] }) {
  return definePlugin({
    name: `test-plugin-${name}`,
    version: '0.1.0',
    kernel: '^0.1.0',
    apply(kernel) {
      kernel.hooks.controllers.tap(`test-plugin-${name}`, (registry) => {
        registry.register({
          name,
          start(ctx) {
            log.contexts.push(ctx);
            ctx.informers.informer<Namespace>(RESOURCES.namespaces).addHandlers({
              add: (ns) => ctx.recorder.event(ns, 'Normal', 'Seen', `${name} saw namespace ${ns.metadata.name}`),
            });
            ctx.track!(
              new Promise<void>((resolve) => {
                ctx.signal.addEventListener('abort', () =>
                  setTimeout(() => {
                    log.finished.push(name);
                    resolve();
                  }, 50),
                );
              }),
            );
          },
        });
      });
    },
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function startKernel(options: Record<string, unknown>, controllers: ReturnType<typeof namespaceWatcher>[], authorizer = true): Promise<Kernel> {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cm-'));
  dirs.push(dir);
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0, logLevel: process.env.SKIFF_TEST_LOG ?? 'error' } });
  kernel.use(store).use(apiServer, { port: 0 }).use(controllerManager, options);
  if (authorizer) kernel.use(alwaysAllow);
  for (const controller of controllers) kernel.use(controller);
  await kernel.start();
  return kernel;
}

describe('@skiff/controller-manager', () => {
  it('runs the enabled controllers with a working client, shared informers and event recorder, and waits for them on stop', async () => {
    const log = { contexts: [] as ControllerContext[], finished: [] as string[] };
    const kernel = await startKernel({ enabled: ['*', '-quiet'], workers: 3 }, [namespaceWatcher('loud', log), namespaceWatcher('quiet', log)]);
    try {
      expect(log.contexts).toHaveLength(1);
      expect(log.contexts[0]!.workers).toBe(3);
      const client = createLoopbackClient(kernel.resolve('apiHandler'), { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
      await client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'observed' } });
      // Events about cluster-scoped objects go to the default namespace, as in Kubernetes.
      const event = await waitFor('the Seen event', async () => {
        const events = await client.list<Event>(RESOURCES.events, 'default');
        return events.items.find((item) => item.reason === 'Seen' && item.involvedObject.name === 'observed');
      });
      expect(event).toMatchObject({ message: 'loud saw namespace observed', type: 'Normal', source: { component: 'loud-controller' } });
      expect((await client.list<Event>(RESOURCES.events, 'default')).items.filter((item) => item.message?.startsWith('quiet'))).toEqual([]);
    } finally {
      await kernel.stop();
    }
    expect(log.finished).toEqual(['loud']);
  });

  it('refuses to start when "enabled" names a controller nobody registered', async () => {
    const log = { contexts: [] as ControllerContext[], finished: [] as string[] };
    await expect(startKernel({ enabled: ['lodu'] }, [namespaceWatcher('loud', log)])).rejects.toThrow(
      'option "enabled" names controller "lodu", which no plugin registered (known: loud)',
    );
  });

  it('refuses to start, in one line, when the authorizers would not let it work', async () => {
    await expect(startKernel({}, [], false)).rejects.toThrow(
      'component "@skiff/controller-manager" failed to start: the authorizers do not let system:kube-controller-manager create pods (selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "system:kube-controller-manager" cannot create resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope); the cluster cannot work without it: add an authorizer that allows it, such as @skiff/plugin-authz-always-allow',
    );
  });

  it('checks its options when loaded', () => {
    expect(() => new Kernel().use(controllerManager, { workers: 0 })).toThrow(/option "workers" must be >= 1/);
    expect(() => new Kernel().use(controllerManager, { enabled: ['Deployment!'] })).toThrow(/option "enabled\[0\]" must be a string matching/);
  });
});
