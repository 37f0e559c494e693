import { Kernel } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import plugin, { PLUGIN_NAME } from './index.js';

describe(PLUGIN_NAME, () => {
  it('loads into a kernel: name, version and kernel range check out', () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } }).use(plugin);
    expect(kernel.has(PLUGIN_NAME)).toBe(true);
  });
});
