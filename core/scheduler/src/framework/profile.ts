import type { SchedulerPlugin, SchedulerPluginRegistry } from '@skiff/kernel';
import { SchedulerError } from '../errors.js';

export interface ScorePluginEntry {
  plugin: SchedulerPlugin;
  weight: number;
}

/** Which plugins a profile enables at each extension point, resolved once so the cycle never looks names up. */
export interface SchedulingProfile {
  queueSort?: SchedulerPlugin;
  preFilter: SchedulerPlugin[];
  filter: SchedulerPlugin[];
  postFilter: SchedulerPlugin[];
  preScore: SchedulerPlugin[];
  score: ScorePluginEntry[];
  reserve: SchedulerPlugin[];
  permit: SchedulerPlugin[];
  preBind: SchedulerPlugin[];
  bind: SchedulerPlugin[];
  postBind: SchedulerPlugin[];
  /** The package that registered each plugin, by plugin name: logs of a failing plugin name it. */
  packages: ReadonlyMap<string, string>;
}

export interface ProfileConfig {
  /** Plugins whose preFilter and filter run. Default: every registered plugin that has either. */
  filter?: string[];
  /** Plugins whose preScore, score and normalizeScore run, with weights. Default: every plugin with score(), weight defaultWeight ?? 1. */
  score?: { name: string; weight: number }[];
}

function lookup(registry: SchedulerPluginRegistry, name: string, point: string): SchedulerPlugin {
  const plugin = registry.get(name);
  if (!plugin) {
    const known =
      registry
        .list()
        .map((p) => p.name)
        .join(', ') || 'none';
    throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_UNKNOWN_PLUGIN', { point, name, known });
  }
  return plugin;
}

/**
 * Resolves a profile against the registered plugins. `filter` and `score` choose plugins by name; every
 * other extension point (queueSort, postFilter, reserve, permit, preBind, bind, postBind) runs for every
 * registered plugin that implements it, in registration order.
 */
export function buildProfile(
  registry: SchedulerPluginRegistry & { packageOf?(name: string): string | undefined },
  config: ProfileConfig = {},
): SchedulingProfile {
  const all = registry.list();
  const packages = new Map<string, string>();
  for (const { name } of all) {
    const owner = registry.packageOf?.(name);
    if (owner) packages.set(name, owner);
  }

  const filtering = config.filter
    ? config.filter.map((name) => {
        const plugin = lookup(registry, name, 'filter');
        if (!plugin.filter && !plugin.preFilter)
          throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_NOT_CAPABLE', { name, point: 'filter', method: 'filter' });
        return plugin;
      })
    : all.filter((p) => p.filter || p.preFilter);

  const score: ScorePluginEntry[] = config.score
    ? config.score.map(({ name, weight }) => {
        const plugin = lookup(registry, name, 'score');
        if (!plugin.score) throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_NOT_CAPABLE', { name, point: 'score', method: 'score' });
        return { plugin, weight };
      })
    : all.filter((p) => p.score).map((plugin) => ({ plugin, weight: plugin.defaultWeight ?? 1 }));

  return {
    queueSort: all.find((p) => p.queueSort),
    preFilter: filtering.filter((p) => p.preFilter),
    filter: filtering.filter((p) => p.filter),
    postFilter: all.filter((p) => p.postFilter),
    preScore: score.map((entry) => entry.plugin).filter((p) => p.preScore),
    score,
    reserve: all.filter((p) => p.reserve || p.unreserve),
    permit: all.filter((p) => p.permit),
    preBind: all.filter((p) => p.preBind),
    bind: all.filter((p) => p.bind),
    postBind: all.filter((p) => p.postBind),
    packages,
  };
}
