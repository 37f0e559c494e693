import { describe, expect, it } from 'vitest';
import type { SchedulerPlugin } from '@skiff/kernel';
import { buildProfile } from './profile.js';
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

  it('takes named filters and weights', () => {
    const profile = buildProfile(registry(), { filter: [], score: [{ name: 'Spread', weight: 5 }] });
    expect(profile.filter).toEqual([]);
    expect(profile.score).toEqual([{ plugin: spread, weight: 5 }]);
  });

  it('names the unknown plugin and the known ones', () => {
    expect(() => buildProfile(registry(), { filter: ['Nope'] })).toThrow(
      'scheduler profile names filter plugin "Nope", which is not registered (known: Fit, Spread, Binder)',
    );
    expect(() => buildProfile(registry(), { score: [{ name: 'Fit', weight: 1 }] })).toThrow('has no score() method');
  });

  it('refuses duplicate and nameless plugins', () => {
    const r = registry();
    expect(() => r.register({ ...fit })).toThrow('scheduler plugin "Fit" is registered twice');
    expect(() => r.register({ name: '' })).toThrow('needs a non-empty "name"');
  });
});
