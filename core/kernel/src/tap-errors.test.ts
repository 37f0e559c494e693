import { describe, expect, it } from 'vitest';
import { ApiError } from '@skiff/api';
import { Kernel } from './kernel.js';
import { KernelError } from './errors.js';
import { definePlugin } from './plugin.js';
import { isPluginFailure, type PluginFailure, pluginInCharge, skipFailingTaps, type PluginInCharge } from './tap-errors.js';
import { AdmissionError, type AdmissionRequest, type AuthnRequest } from './types/apiserver.js';

const quiet = () => new Kernel({ config: { logLevel: 'silent' } });
const plugin = (name: string, apply: (kernel: Kernel) => void) => definePlugin({ name, version: '1.0.0', kernel: '^0.1.0', apply });
const admission = { operation: 'CREATE' } as AdmissionRequest;

async function failureOf(run: () => unknown): Promise<PluginFailure> {
  try {
    await run();
  } catch (err) {
    expect(isPluginFailure(err)).toBe(true);
    return err as PluginFailure;
  }
  throw new Error('expected a failure');
}

describe('errors from plugins name the plugin', () => {
  it('names the plugin of a synchronous tap, keeping the original as the cause', async () => {
    const kernel = quiet();
    const boom = new TypeError("Cannot read properties of undefined (reading 'spec')");
    kernel.use(
      plugin('skiff-plugin-config', (k) =>
        k.hooks.configure.tap('skiff-plugin-config', () => {
          throw boom;
        }),
      ),
    );
    const failure = await failureOf(() => kernel.hooks.configure.call(kernel.config));
    expect(failure.message).toBe(`plugin "skiff-plugin-config" failed in configure: Cannot read properties of undefined (reading 'spec')`);
    expect(failure).toMatchObject({
      code: 'SKIFF_ERR_KERNEL_PLUGIN_FAILED',
      pluginName: 'skiff-plugin-config',
      tapName: 'skiff-plugin-config',
      hookName: 'configure',
    });
    expect(failure.cause).toBe(boom);
    expect(failure.detail).toBe("Cannot read properties of undefined (reading 'spec')");
    expect(failure).toBeInstanceOf(KernelError);
  });

  it('names the package and the tap when they differ', async () => {
    const kernel = quiet();
    kernel.use(
      plugin('skiff-plugin-deny-latest', (k) =>
        k.hooks.validate.tapPromise('deny-latest', async () => {
          throw new Error('boom');
        }),
      ),
    );
    const failure = await failureOf(() => kernel.hooks.validate.promise(admission));
    expect(failure.message).toBe('plugin "skiff-plugin-deny-latest" failed in validate (tap "deny-latest"): boom');
    expect(failure).toMatchObject({ pluginName: 'skiff-plugin-deny-latest', tapName: 'deny-latest', hookName: 'validate' });
  });

  it('names the plugin of a promise tap that throws before returning its promise', async () => {
    const kernel = quiet();
    kernel.hooks.mutate.tapPromise('eager', () => {
      throw new Error('thrown at once');
    });
    const failure = await failureOf(() => kernel.hooks.mutate.promise(admission));
    expect(failure.message).toBe('plugin "eager" failed in mutate: thrown at once');
  });

  it('names the plugin of a callback tap, whether it throws or calls back with an error', async () => {
    const kernel = quiet();
    kernel.hooks.start.tapAsync('calls-back', (callback) => setTimeout(() => callback(new Error('port in use')), 1));
    expect((await failureOf(() => kernel.hooks.start.promise())).message).toBe('plugin "calls-back" failed in start: port in use');

    const other = quiet();
    other.hooks.stop.tapAsync('throws', () => {
      throw new Error('no handle');
    });
    expect((await failureOf(() => other.hooks.stop.promise())).message).toBe('plugin "throws" failed in stop: no handle');
  });

  it('names the plugin when a tap throws something that is not an Error', async () => {
    const kernel = quiet();
    kernel.hooks.audit.tap('strings', () => {
      throw 'just a string';
    });
    expect((await failureOf(() => kernel.hooks.audit.call({} as never))).message).toBe('plugin "strings" failed in audit: just a string');
  });

  it('lets deliberate answers through unchanged: admission rejections, API errors, kernel errors', async () => {
    const kernel = quiet();
    const rejection = new AdmissionError('pods "x" is forbidden: no latest tags', 422);
    kernel.hooks.validate.tapPromise('deny-latest', async () => {
      throw rejection;
    });
    await expect(kernel.hooks.validate.promise(admission)).rejects.toBe(rejection);

    // Recognised by shape too: a plugin bundling its own copy of the kernel throws another class.
    const bundled = Object.assign(new Error('quota exceeded'), { name: 'AdmissionError', status: 403 });
    const shaped = quiet();
    shaped.hooks.mutate.tap('bundled', () => {
      throw bundled;
    });
    await expect(shaped.hooks.mutate.promise(admission)).rejects.toBe(bundled);

    const unauthorized = new ApiError('SKIFF_ERR_API_UNAUTHORIZED', 'Unauthorized');
    const authn = quiet();
    authn.hooks.authenticate.tapPromise('token', async () => {
      throw unauthorized;
    });
    await expect(authn.hooks.authenticate.promise({ headers: {}, errors: [] })).rejects.toBe(unauthorized);

    const kernelError = new KernelError('SKIFF_ERR_KERNEL_COMPONENT', { name: 'store', detail: 'disk full' });
    const lifecycle = quiet();
    lifecycle.hooks.start.tapPromise('store', async () => {
      throw kernelError;
    });
    await expect(lifecycle.hooks.start.promise()).rejects.toBe(kernelError);
  });

  it('names the innermost plugin when one hook calls another', async () => {
    const kernel = quiet();
    kernel.hooks.controllers.tap('skiff-plugin-controllers', () => {
      throw new Error('no informer');
    });
    kernel.lifecycle('@skiff/controller-manager', 0, { start: () => kernel.hooks.controllers.call({ register() {}, list: () => [] }) });
    await expect(kernel.start()).rejects.toThrow('plugin "skiff-plugin-controllers" failed in controllers: no informer');
  });

  it('lets taps that succeed answer as before', async () => {
    const kernel = quiet();
    kernel.hooks.configure.tap('a', (config) => ({ ...config, nodes: 3 }));
    kernel.hooks.authenticate.tapPromise('b', async () => ({ user: { username: 'alice', groups: [] } }));
    kernel.hooks.authorize.tapAsync('c', (_attributes, callback) => callback(null, { decision: 'allow' }));
    expect(kernel.hooks.configure.call(kernel.config).nodes).toBe(3);
    expect(await kernel.hooks.authenticate.promise({ headers: {}, errors: [] })).toEqual({ user: { username: 'alice', groups: [] } });
    expect(await kernel.hooks.authorize.promise({} as never)).toEqual({ decision: 'allow' });
  });
});

describe('a throw in apply', () => {
  it('is a kernel error naming the plugin, the one line the CLI prints', () => {
    const boom = new Error('boom in apply');
    const failing = plugin('skiff-plugin-broken', () => {
      throw boom;
    });
    let caught: unknown;
    try {
      quiet().use(failing);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(KernelError);
    expect(caught).toMatchObject({
      code: 'SKIFF_ERR_KERNEL_PLUGIN_APPLY',
      message: 'plugin "skiff-plugin-broken" failed in apply: boom in apply',
      cause: boom,
    });
  });

  it('passes a kernel error through, so a nested use names the plugin at fault', () => {
    const outer = plugin('outer', (k) => k.use(plugin('inner', () => undefined)).use(plugin('inner', () => undefined)));
    expect(() => quiet().use(outer)).toThrow(expect.objectContaining({ code: 'SKIFF_ERR_KERNEL_PLUGIN_DUPLICATE', message: 'plugin "inner" is loaded twice' }));
  });
});

describe('pluginInCharge', () => {
  it('tells a registry which plugin registered what, during apply and in synchronous taps', () => {
    const kernel = quiet();
    const seen: (PluginInCharge | undefined)[] = [];
    kernel.use(
      plugin('skiff-plugin-controllers', (k) => {
        seen.push(pluginInCharge());
        k.hooks.controllers.tap('my-controllers', () => void seen.push(pluginInCharge()));
      }),
    );
    kernel.hooks.controllers.tap('unowned', () => void seen.push(pluginInCharge()));
    kernel.hooks.controllers.call({ register() {}, list: () => [] });
    expect(seen).toEqual([
      { pluginName: 'skiff-plugin-controllers' },
      { pluginName: 'skiff-plugin-controllers', tapName: 'my-controllers' },
      { pluginName: 'unowned', tapName: 'unowned' },
    ]);
    expect(pluginInCharge()).toBeUndefined();
  });
});

describe('skipFailingTaps', () => {
  it('hands a failing tap to onFailure and lets the chain go on to the next', async () => {
    const kernel = quiet();
    const failures: string[] = [];
    kernel.hooks.authenticate.tapPromise('broken-oidc', async (request) => {
      const claims = JSON.parse(request.headers['x-id-token'] ?? 'null') as { sub: string } | null;
      return { user: { username: claims!.sub, groups: [] } };
    });
    kernel.hooks.authenticate.tap('token', (request) =>
      request.headers.authorization === 'Bearer t' ? { user: { username: 'alice', groups: [] } } : undefined,
    );
    skipFailingTaps(kernel.hooks.authenticate, (failure, [request]) => {
      failures.push(failure.message);
      (request as AuthnRequest).errors.push(`authenticator "${failure.tapName}" failed`);
    });
    const request: AuthnRequest = { headers: { authorization: 'Bearer t' }, errors: [] };
    expect(await kernel.hooks.authenticate.promise(request)).toEqual({ user: { username: 'alice', groups: [] } });
    expect(failures).toEqual([`plugin "broken-oidc" failed in authenticate: Cannot read properties of null (reading 'sub')`]);
    expect(request.errors).toEqual(['authenticator "broken-oidc" failed']);
  });
});
