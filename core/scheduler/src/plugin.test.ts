import { describe, expect, it } from 'vitest';
import { definePlugin, Kernel } from '@skiff/kernel';
import schedulerPlugin from './index.js';

const fit = definePlugin({
  name: 'test-fit',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.schedulerPlugins.tap('test-fit', (registry) => registry.register({ name: 'Fit', filter: () => null }));
  },
});

/** A request handler that never serves: enough for starts that fail before they talk to the API. */
const unavailable = { handle: async () => ({ status: 503 }) };

describe('the scheduler plugin', () => {
  it('fails the start when a profile names a plugin nobody registered', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } })
      .use(schedulerPlugin, {
        thread: 'main',
        profiles: [{ schedulerName: 'default-scheduler', plugins: { filter: { enabled: [{ name: 'Fit' }, { name: 'Missing' }] } } }],
      })
      .use(fit);
    kernel.provide('apiHandler', unavailable);
    await expect(kernel.start()).rejects.toThrow(
      'component "@skiff/scheduler" failed to start: scheduler profile names filter plugin "Missing", which is not registered (known: NodeReady, Fit)',
    );
  });

  it('says plainly when there is no API server to talk to', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin).use(fit);
    await expect(kernel.start()).rejects.toThrow('plugin "@skiff/scheduler" needs component "apiHandler", which no loaded plugin provides');
  });

  it('checks profiles when loaded', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin, { profiles: [{ plugins: {} }] })).toThrow(
      'option "profiles[0].schedulerName" is required',
    );
    expect(() =>
      new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin, {
        profiles: [{ schedulerName: 'x', plugins: { score: { enabled: [{ name: 'Fit', weight: -1 }] } } }],
      }),
    ).toThrow('profiles[0].plugins.score.enabled[0].weight');
  });
});
