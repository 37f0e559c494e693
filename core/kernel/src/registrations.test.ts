import { describe, expect, it } from 'vitest';
import { Kernel } from './kernel.js';
import { definePlugin } from './plugin.js';
import { Registrations } from './registrations.js';

const plugin = (name: string, apply: (kernel: Kernel) => void) => definePlugin({ name, version: '1.0.0', kernel: '^0.1.0', apply });

describe('Registrations', () => {
  it('keeps items in registration order with the plugin that registered each', () => {
    const registrations = new Registrations<{ name: string }>({ duplicate: (name) => new Error(`${name} twice`) });
    new Kernel({ config: { logLevel: 'silent' } }).use(plugin('skiff-plugin-a', () => registrations.add('a', { name: 'a' })));
    registrations.add('b', { name: 'b' });
    expect(registrations.list()).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(registrations.names()).toEqual(['a', 'b']);
    expect(registrations.get('a')).toEqual({ name: 'a' });
    expect(registrations.pluginOf('a')).toBe('skiff-plugin-a');
    expect(registrations.pluginOf('b')).toBeUndefined();
  });

  it('names the fallback for items added outside any plugin', () => {
    const registrations = new Registrations<string>({ duplicate: (name) => new Error(name), fallbackPlugin: '@skiff/scheduler' });
    registrations.add('builtin', 'x');
    expect(registrations.pluginOf('builtin')).toBe('@skiff/scheduler');
  });

  it("refuses a second item under a name with the owner's error", () => {
    const registrations = new Registrations<string>({ duplicate: (name) => new Error(`"${name}" is registered twice`) });
    registrations.add('a', 'first');
    expect(() => registrations.add('a', 'second')).toThrow('"a" is registered twice');
    expect(registrations.get('a')).toBe('first');
  });
});
