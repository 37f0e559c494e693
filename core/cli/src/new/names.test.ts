import { describe, expect, it } from 'vitest';
import { pluginKind } from './kinds.js';
import { pluginNames } from './names.js';

describe('plugin names', () => {
  it('derives the package, folder and PascalCase names', () => {
    expect(pluginNames('deny-label')).toEqual({
      name: 'deny-label',
      packageName: 'skiff-plugin-deny-label',
      folder: 'skiff-plugin-deny-label',
      pascalName: 'DenyLabel',
    });
    expect(pluginNames('gpu2')).toMatchObject({ packageName: 'skiff-plugin-gpu2', pascalName: 'Gpu2' });
  });

  it('does not double the skiff-plugin- prefix', () => {
    expect(pluginNames('skiff-plugin-zone-spread')).toMatchObject({ name: 'zone-spread', packageName: 'skiff-plugin-zone-spread' });
  });

  it('keeps a scope in the package name but not in the folder', () => {
    expect(pluginNames('@acme/zone-spread')).toEqual({
      name: 'zone-spread',
      packageName: '@acme/skiff-plugin-zone-spread',
      folder: 'skiff-plugin-zone-spread',
      pascalName: 'ZoneSpread',
      scope: 'acme',
    });
  });

  it('refuses names that are not npm-safe lower-case words, in one line', () => {
    for (const bad of ['DenyLabel', 'deny_label', 'deny label', '-deny', 'deny-', 'deny--label', '9lives', '../up', '', 'skiff-plugin-']) {
      expect(() => pluginNames(bad), bad).toThrow(
        `plugin name "${bad}" must be lower-case letters, digits and dashes, starting with a letter (e.g. "deny-label")`,
      );
    }
    expect(() => pluginNames('@Acme/x')).toThrow('scope "@Acme" must be lower-case letters, digits and dashes');
    expect(() => pluginNames('@/x')).toThrow('scope "@" must be');
    expect(() => pluginNames('a'.repeat(210))).toThrow('is too long: npm package names have at most 214 characters');
  });
});

describe('plugin kinds', () => {
  it('knows the five kinds and the area names authn and authz', () => {
    for (const kind of ['admission', 'scheduler', 'authenticator', 'authorizer', 'controller']) expect(pluginKind(kind)).toBe(kind);
    expect(pluginKind('authn')).toBe('authenticator');
    expect(pluginKind('authz')).toBe('authorizer');
  });

  it('lists the kinds for an unknown one, including inherited property names', () => {
    for (const bad of ['webhook', 'toString', 'constructor']) {
      expect(() => pluginKind(bad)).toThrow(`unknown plugin kind "${bad}" (kinds: admission, scheduler, authenticator, authorizer, controller)`);
    }
  });
});
