import { describe, expect, it } from 'vitest';
import type { SchedulerPlugin } from '@skiff/kernel';
import { buildProfile, buildProfiles } from './profile.js';
import { PluginRegistry } from './registry.js';

const fit: SchedulerPlugin = { name: 'Fit', preFilter: () => null, filter: () => null };
const spread: SchedulerPlugin = { name: 'Spread', defaultWeight: 2, score: () => 0, preScore: () => null };
const binder: SchedulerPlugin = { name: 'Binder', bind: () => undefined, reserve: () => null };

function registry(): PluginRegistry {
  const r = new PluginRegistry();
  for (const plugin of [fit, spread, binder]) r.register(plugin);
  return r;
}

describe('buildProfile', () => {
  it('enables every registered plugin by default, with default weights', () => {
    const profile = buildProfile(registry());
    expect(profile.filter).toEqual([fit]);
    expect(profile.preFilter).toEqual([fit]);
    expect(profile.score).toEqual([{ plugin: spread, weight: 2 }]);
    expect(profile.preScore).toEqual([spread]);
    expect(profile.bind).toEqual([binder]);
    expect(profile.reserve).toEqual([binder]);
  });

  it('disables and enables per extension point, with weights, as KubeSchedulerConfiguration does', () => {
    const profile = buildProfile(registry(), { plugins: { filter: { disabled: [{ name: 'Fit' }] }, score: { enabled: [{ name: 'Spread', weight: 5 }] } } });
    expect(profile.filter).toEqual([]);
    expect(profile.preFilter).toEqual([fit]);
    expect(profile.score).toEqual([{ plugin: spread, weight: 5 }]);
    const none = buildProfile(registry(), { plugins: { multiPoint: { disabled: [{ name: '*' }] }, score: { enabled: [{ name: 'Spread' }] } } });
    expect(none.filter).toEqual([]);
    expect(none.bind).toEqual([]);
    expect(none.score).toEqual([{ plugin: spread, weight: 2 }]);
  });

  it('gives a profile its own copy of a plugin configured by pluginConfig args', () => {
    const configurable: SchedulerPlugin = {
      name: 'Weighted',
      score: () => 1,
      withArgs: (args) => ({ ...configurable, score: () => Number(args.value) }),
    };
    const r = registry();
    r.register(configurable);
    const profile = buildProfile(r, {
      pluginConfig: [{ name: 'Weighted', args: { apiVersion: 'kubescheduler.config.k8s.io/v1', kind: 'WeightedArgs', value: 7 } }],
    });
    const entry = profile.score.find((e) => e.plugin.name === 'Weighted')!;
    expect(entry.plugin).not.toBe(configurable);
    expect(entry.plugin.score!(new Map(), {} as never, {} as never)).toBe(7);
    expect(() => buildProfile(r, { schedulerName: 'p', pluginConfig: [{ name: 'Fit', args: { a: 1 } }] })).toThrow(
      'scheduler profile "p" gives args to plugin "Fit": it takes no args',
    );
  });

  it('names the unknown plugin and the known ones', () => {
    expect(() => buildProfile(registry(), { plugins: { filter: { enabled: [{ name: 'Nope' }] } } })).toThrow(
      'scheduler profile names filter plugin "Nope", which is not registered (known: Fit, Spread, Binder)',
    );
    expect(() => buildProfile(registry(), { plugins: { score: { enabled: [{ name: 'Fit', weight: 1 }] } } })).toThrow('has no score() method');
  });

  it('builds one profile per schedulerName, refusing a name twice', () => {
    const profiles = buildProfiles(registry(), [{ schedulerName: 'a' }, { schedulerName: 'b', plugins: { score: { disabled: [{ name: '*' }] } } }]);
    expect(profiles.map((p) => p.schedulerName)).toEqual(['a', 'b']);
    expect(profiles[1]!.score).toEqual([]);
    expect(() => buildProfiles(registry(), [{ schedulerName: 'a' }, { schedulerName: 'a' }])).toThrow('scheduler profiles name schedulerName "a" twice');
  });

  it('refuses duplicate and nameless plugins', () => {
    const r = registry();
    expect(() => r.register({ ...fit })).toThrow('scheduler plugin "Fit" is registered twice');
    expect(() => r.register({ name: '' })).toThrow('needs a non-empty "name"');
  });
});
