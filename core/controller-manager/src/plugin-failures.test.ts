import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type Namespace } from '@skiff/api';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient, runWorkers, WorkQueue } from '@skiff/client';
import { definePlugin, Kernel, recordingLogger, waitFor, type ControllerDefinition, type LogRecord } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';
import { afterEach, describe, expect, it } from 'vitest';
import controllerManager from './plugin.js';

const PLUGIN = 'skiff-plugin-buggy-controllers';
const controllersPlugin = (...controllers: ControllerDefinition[]) =>
  definePlugin({
    name: PLUGIN,
    version: '0.1.0',
    kernel: '^0.1.0',
    apply(kernel) {
      kernel.hooks.controllers.tap(PLUGIN, (registry) => controllers.forEach((controller) => registry.register(controller)));
    },
  });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function kernelWith(lines: LogRecord[], ...controllers: ControllerDefinition[]): Kernel {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cm-failures-'));
  dirs.push(dir);
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0 }, logger: recordingLogger(lines) });
  return kernel
    .use(store)
    .use(apiServer, { port: 0 })
    .use(alwaysAllow)
    .use(controllerManager)
    .use(controllersPlugin(...controllers));
}

describe('a controller that fails', () => {
  it('to start: the start fails naming the controller and its plugin, and the log says the same', async () => {
    const lines: LogRecord[] = [];
    const kernel = kernelWith(lines, {
      name: 'exploding',
      start() {
        throw new TypeError("Cannot read properties of undefined (reading 'informer')");
      },
    });
    await expect(kernel.start()).rejects.toThrow(
      `component "@skiff/controller-manager" failed to start: controller "exploding" (plugin "${PLUGIN}") failed to start: Cannot read properties of undefined (reading 'informer')`,
    );
    const logged = lines.find((line) => line.message === 'controller failed to start');
    expect(logged).toMatchObject({ level: 'error', fields: { component: 'controller-manager', controller: 'exploding', plugin: PLUGIN } });
    expect((logged!.fields.err as Error).message).toBe("Cannot read properties of undefined (reading 'informer')");
  });

  it('in a sync, an informer handler or its workers: every log line names the controller and its plugin', async () => {
    const lines: LogRecord[] = [];
    const kernel = kernelWith(
      lines,
      {
        name: 'namespace-syncer',
        start(ctx) {
          const queue = new WorkQueue<string>({ name: 'namespaces', baseDelayMs: 10, maxDelayMs: 10 });
          ctx.informers.informer<Namespace>(RESOURCES.namespaces).addHandlers({
            add: (ns) => {
              queue.add(ns.metadata.name!);
              if (ns.metadata.name === 'handler-bug') throw new Error('handler bug');
            },
          });
          ctx.track!(
            runWorkers(
              queue,
              1,
              async (name) => {
                if (name === 'sync-bug') throw new Error(`cannot sync namespace ${name}`);
              },
              { logger: ctx.logger, signal: ctx.signal, maxRetries: 1 },
            ),
          );
        },
      },
      {
        name: 'short-lived',
        start(ctx) {
          ctx.track!(Promise.reject(new Error('worker crashed')));
        },
      },
    );
    await kernel.start();
    try {
      const client = createLoopbackClient(kernel.resolve('apiHandler'), { username: 'test-admin', groups: ['system:masters', 'system:authenticated'] });
      await client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sync-bug' } });
      await client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'handler-bug' } });

      const sync = await waitFor('the "work item failed; retrying with backoff" log line', () =>
        lines.find((line) => line.message === 'work item failed; retrying with backoff'),
      );
      expect(sync).toMatchObject({
        level: 'warn',
        fields: { component: 'controller-manager', controller: 'namespace-syncer', plugin: PLUGIN, item: 'sync-bug' },
      });
      expect((sync.fields.err as Error).message).toBe('cannot sync namespace sync-bug');

      const handler = await waitFor('the "informer handler failed" log line', () => lines.find((line) => line.message === 'informer handler failed'));
      expect(handler).toMatchObject({ level: 'error', fields: { controller: 'namespace-syncer', plugin: PLUGIN, handler: 'add', key: 'handler-bug' } });

      const crashed = await waitFor('the "controller stopped with an error" log line', () =>
        lines.find((line) => line.message === 'controller stopped with an error'),
      );
      expect(crashed).toMatchObject({ level: 'error', fields: { controller: 'short-lived', plugin: PLUGIN } });
      expect((crashed.fields.err as Error).message).toBe('worker crashed');
    } finally {
      await kernel.stop();
    }
  });
});
