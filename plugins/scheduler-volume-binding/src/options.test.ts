import { Kernel } from '@skiff/kernel';
import { buildProfile, PluginRegistry } from '@skiff/scheduler';
import { describe, expect, it } from 'vitest';
import volumeBinding from './index.js';
import { createVolumeBinding } from './volume-binding.js';

const registry = () => {
  const plugins = new PluginRegistry();
  plugins.register(createVolumeBinding());
  return plugins;
};
const withArgs = (args: Record<string, unknown>) => buildProfile(registry(), { pluginConfig: [{ name: 'VolumeBinding', args }] });

describe('VolumeBindingArgs', () => {
  it('sits at preFilter, filter, reserve and preBind, never at score (VolumeCapacityPriority is off)', () => {
    const profile = buildProfile(registry());
    const at = (plugins: { name: string }[]) => plugins.map((plugin) => plugin.name);
    expect([at(profile.preFilter), at(profile.filter), at(profile.reserve), at(profile.preBind)]).toEqual([
      ['VolumeBinding'],
      ['VolumeBinding'],
      ['VolumeBinding'],
      ['VolumeBinding'],
    ]);
    expect(profile.score).toEqual([]);
  });

  it('takes bindTimeoutSeconds from a profile, as a copy of its own', () => {
    const profile = withArgs({ bindTimeoutSeconds: 30 });
    expect(profile.preBind[0]).not.toBe(registry().get('VolumeBinding'));
    expect(profile.preBind[0]!.name).toBe('VolumeBinding');
  });

  it('refuses a negative timeout, an unknown field, and shape while its feature gate is off', () => {
    expect(() => withArgs({ bindTimeoutSeconds: -1 })).toThrow(
      'scheduler profile "default-scheduler" gives args to plugin "VolumeBinding": option "args.bindTimeoutSeconds" must be >= 0 (got -1)',
    );
    expect(() => withArgs({ bindTimeout: 5 })).toThrow('unknown option "args.bindTimeout" (known: bindTimeoutSeconds, shape)');
    expect(() => withArgs({ shape: [{ utilization: 0, score: 0 }] })).toThrow(
      'option "args.shape" is not allowed: unexpected field `shape`, remove it or turn on the feature gate VolumeCapacityPriority',
    );
  });

  it('checks the same args as plugin options when the package is loaded', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(volumeBinding, { shape: [] })).toThrow('option "shape" is not allowed');
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(volumeBinding, { bindTimeoutSeconds: 1.5 })).toThrow('must be an integer');
  });
});
