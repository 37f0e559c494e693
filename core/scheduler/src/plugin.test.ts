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

describe('the scheduler plugin', () => {
  it('fails the start when a profile names a plugin nobody registered', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin, { profiles: { filter: ['Fit', 'Missing'] } }).use(fit);
    await expect(kernel.start()).rejects.toThrow(
      'component "@skiff/scheduler" failed to start: scheduler profile names filter plugin "Missing", which is not registered (known: NodeUnschedulable, NodeReady, Fit)',
    );
  });

  it('says plainly when there is no API server to talk to', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin).use(fit);
    await expect(kernel.start()).rejects.toThrow('the scheduler needs an API server in this process');
  });

  it('checks score weights when loaded', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(schedulerPlugin, { profiles: { score: [{ name: 'Fit' }] } })).toThrow(
      'option "profiles.score[0].weight" is required',
    );
  });
});
