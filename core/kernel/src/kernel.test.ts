import { describe, expect, it } from 'vitest';
import { Kernel } from './kernel.js';
import { definePlugin } from './plugin.js';
import { LIFECYCLE_STAGE } from './hooks.js';

const quiet = () => new Kernel({ config: { logLevel: 'silent' } });
const plugin = (name: string, extra: object = {}) => definePlugin({ name, version: '1.0.0', kernel: '^0.1.0', apply() {}, ...extra });

describe('Kernel', () => {
  it('freezes the hook catalogue', () => {
    const kernel = quiet();
    expect(Object.isFrozen(kernel.hooks)).toBe(true);
    expect(() => {
      (kernel.hooks as Record<string, unknown>).authenticate = null;
    }).toThrow();
  });

  it('checks plugin metadata with coded errors', () => {
    expect(() => quiet().use({ name: 'x' } as never)).toThrow('plugin "x" is invalid: its default export must be an object with name and apply');
    expect(() => quiet().use(plugin('x', { version: '' }))).toThrow('plugin "x" is invalid: "version" must be a non-empty string');
    expect(() => quiet().use(plugin('x', { kernel: '^2.0.0' }))).toThrow('plugin "x" supports kernel ^2.0.0, but this kernel is 0.1.0');
    const kernel = quiet().use(plugin('x'));
    expect(() => kernel.use(plugin('x'))).toThrow(expect.objectContaining({ code: 'SKIFF_ERR_KERNEL_PLUGIN_DUPLICATE' }));
  });

  it('validates options against the schema, filling defaults', () => {
    let seen: unknown;
    const withOptions = plugin('opts', {
      options: {
        type: 'object',
        properties: { subnet: { type: 'string', default: '10.0.0.0/16' }, size: { type: 'integer', minimum: 1 } },
      },
      apply(_k: Kernel, options: unknown) {
        seen = options;
      },
    });
    quiet().use(withOptions, { size: 2 });
    expect(seen).toEqual({ subnet: '10.0.0.0/16', size: 2 });
    expect(() => quiet().use(withOptions, { size: 0 })).toThrow('plugin "opts": option "size" must be >= 1 (got 0)');
    expect(() => quiet().use(withOptions, { sise: 2 })).toThrow('plugin "opts": unknown option "sise" (known: subnet, size)');
  });

  it('fails the start when a dependency is missing', async () => {
    const kernel = quiet().use(plugin('needs', { dependencies: ['other'] }));
    await expect(kernel.start()).rejects.toThrow('plugin "needs" needs plugin "other", which is not loaded');
  });

  it('starts components in stage order and stops them in reverse', async () => {
    const kernel = quiet();
    const order: string[] = [];
    for (const [name, stage] of [
      ['kubelet', LIFECYCLE_STAGE.KUBELET],
      ['store', LIFECYCLE_STAGE.STORE],
      ['apiserver', LIFECYCLE_STAGE.API_SERVER],
    ] as const) {
      kernel.lifecycle(name, stage, { start: () => void order.push(`start ${name}`), stop: () => void order.push(`stop ${name}`) });
    }
    await kernel.start();
    await kernel.stop();
    expect(order).toEqual(['start store', 'start apiserver', 'start kubelet', 'stop kubelet', 'stop apiserver', 'stop store']);
  });

  it('runs configure and components before start, and stops what started when a start fails', async () => {
    const kernel = quiet();
    const order: string[] = [];
    kernel.hooks.configure.tap('t', (config) => ({ ...config, nodes: 7 }));
    kernel.hooks.components.tap('t', (container) => {
      order.push(`components nodes=${kernel.config.nodes}`);
      expect(container.resolve('config')).toBe(kernel.config);
    });
    kernel.lifecycle('good', 0, { start: () => void order.push('start good'), stop: () => void order.push('stop good') });
    kernel.lifecycle('bad', 10, {
      start: () => {
        throw new Error('port in use');
      },
    });
    await expect(kernel.start()).rejects.toThrow('component "bad" failed to start: port in use');
    expect(order).toEqual(['components nodes=7', 'start good', 'stop good']);
  });

  it('prepares without starting: configure and components run once, start runs the rest', async () => {
    const kernel = quiet();
    const order: string[] = [];
    kernel.hooks.configure.tap('t', (config) => (order.push('configure'), config));
    kernel.hooks.components.tap('t', () => void order.push('components'));
    kernel.lifecycle('c', 0, { start: () => void order.push('start'), stop: () => void order.push('stop') });
    kernel.prepare();
    kernel.prepare();
    expect(order).toEqual(['configure', 'components']);
    expect(kernel.running).toBe(false);
    await kernel.start();
    await kernel.stop();
    expect(order).toEqual(['configure', 'components', 'start', 'stop']);
    expect(() => kernel.prepare()).toThrow('kernel cannot prepare: it is stopped');
  });

  it('shares components through the container; replacing one must be meant', () => {
    const kernel = quiet();
    kernel.provide('example', { kind: 'lmdb' });
    expect(kernel.resolve('example')).toEqual({ kind: 'lmdb' });
    expect(() => kernel.provide('example', { kind: 'etcd' })).toThrow(
      'component "example" is already registered; pass { replace: true } to replace it on purpose',
    );
    kernel.provide('example', { kind: 'etcd' }, { replace: true });
    expect(kernel.resolve('example')).toEqual({ kind: 'etcd' });
    expect(kernel.hasComponent('example')).toBe(true);
    expect(() => kernel.resolve('missing')).toThrow('no component "missing" is registered (no loaded plugin provides it)');
  });
});

describe('component contracts', () => {
  it('refuses two plugins that provide the same component, naming both', async () => {
    const kernel = quiet()
      .use(plugin('lmdb-store', { provides: ['apiServerInfo'] }))
      .use(plugin('etcd-store', { provides: ['apiServerInfo'] }));
    await expect(kernel.start()).rejects.toThrow('plugins "lmdb-store" and "etcd-store" both provide component "apiServerInfo"; remove one of them');
  });

  it('refuses a plugin whose needed component nobody provides, before anything starts', async () => {
    const started: string[] = [];
    const kernel = quiet().use(plugin('needs-handler', { needs: ['apiHandler'] }));
    kernel.lifecycle('other', 0, { start: () => void started.push('other') });
    await expect(kernel.start()).rejects.toThrow('plugin "needs-handler" needs component "apiHandler", which no loaded plugin provides');
    expect(started).toEqual([]);
  });

  it('refuses a plugin that declared a component and did not provide it', async () => {
    const kernel = quiet().use(plugin('forgetful', { provides: ['apiServerInfo'] }));
    await expect(kernel.start()).rejects.toThrow('plugin "forgetful" says it provides component "apiServerInfo" but did not register it');
  });

  it('lets a plugin resolve only the components it declared, naming plugin and component at start', async () => {
    const seen: unknown[] = [];
    const provider = plugin('provider', {
      provides: ['apiServerInfo', 'adminCredential'],
      apply(kernel: Kernel) {
        kernel.hooks.components.tap('provider', () => {
          kernel.provide('apiServerInfo', { url: 'https://127.0.0.1:6443' } as never);
          kernel.provide('adminCredential', { token: 't' });
        });
        // A plugin may resolve what it provides, and the kernel's own components.
        kernel.lifecycle('provider', 0, { start: () => void seen.push(kernel.resolve('apiServerInfo').url, kernel.resolve('config').nodes) });
      },
    });
    const declared = plugin('declared', {
      needs: ['apiServerInfo'],
      wants: ['adminCredential'],
      apply(kernel: Kernel) {
        kernel.lifecycle('declared', 1, { start: () => void seen.push(kernel.resolve('apiServerInfo').url, kernel.resolve('adminCredential').token) });
      },
    });
    await quiet().use(provider).use(declared).start();
    expect(seen).toEqual(['https://127.0.0.1:6443', 1, 'https://127.0.0.1:6443', 't']);

    const undeclared = plugin('undeclared', {
      apply(kernel: Kernel) {
        kernel.lifecycle('undeclared', 1, { start: () => void kernel.resolve('adminCredential') });
      },
    });
    const kernel = quiet().use(provider).use(undeclared);
    await expect(kernel.start()).rejects.toThrow(
      expect.objectContaining({
        code: 'SKIFF_ERR_KERNEL_COMPONENT_UNDECLARED',
        message: `plugin "undeclared" resolves component "adminCredential" without declaring it; add it to the plugin's needs (or wants, if it copes without it)`,
      }),
    );
    // Outside plugins (the CLI, tests) the kernel resolves any component.
    expect(kernel.resolve('adminCredential')).toEqual({ token: 't' });
  });

  it('names who provides a component that is asked for too early', () => {
    const kernel = quiet().use(plugin('late', { provides: ['apiHandler'] }));
    expect(() => kernel.resolve('apiHandler')).toThrow('no component "apiHandler" is registered (plugin "late" provides it once it has started)');
  });
});
