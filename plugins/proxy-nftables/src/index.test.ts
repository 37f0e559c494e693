import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kernel } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { HostCommands } from './host.js';
import plugin, { PLUGIN_NAME, PROXY_NAME } from './index.js';
import { proxyFactory } from './test-support/proxy.js';

const load = (options: Record<string, unknown>) => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);

describe(PLUGIN_NAME, () => {
  it('registers the nftables service proxy', () => {
    expect(load({}).has(PLUGIN_NAME)).toBe(true);
    expect(proxyFactory({}).name).toBe(PROXY_NAME);
  });

  it('refuses bad options at load, naming the option', () => {
    expect(() => load({ clusterCIDR: '10.244.0.0' })).toThrow(
      expect.objectContaining({ code: 'SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', message: expect.stringContaining('"clusterCIDR"') }),
    );
    expect(() => load({ serviceCIDRs: ['10.96.0.1/12'] })).toThrow(expect.objectContaining({ message: expect.stringContaining('serviceCIDRs[0]') }));
    expect(() => load({ table: 'no spaces' })).toThrow(expect.objectContaining({ code: 'SKIFF_ERR_KERNEL_PLUGIN_OPTIONS' }));
    expect(() => load({ masqueradeBit: 40 })).toThrow(expect.objectContaining({ code: 'SKIFF_ERR_KERNEL_PLUGIN_OPTIONS' }));
  });

  it('without nft, or without root, create fails with one readable line', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'skiff-proxy-path-'));
    try {
      await expect(HostCommands.create(undefined, { uid: 0, path: empty })).rejects.toThrow(
        expect.objectContaining({
          code: 'SKIFF_ERR_PROXY_TOOL_MISSING',
          message: 'nft not found on PATH: the nftables service proxy needs it (Debian package nftables)',
        }),
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    await expect(HostCommands.create(undefined, { uid: 1000 })).rejects.toThrow(expect.objectContaining({ code: 'SKIFF_ERR_PROXY_NOT_ROOT' }));
  });
});
