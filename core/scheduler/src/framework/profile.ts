import type { Pod } from '@skiff/api';
import type { CycleState, NodeInfo, SchedulerPlugin, SchedulerPluginRegistry, SchedulingStatus } from '@skiff/kernel';
import { SchedulerError } from '../errors.js';

export interface ScorePluginEntry {
  plugin: SchedulerPlugin;
  weight: number;
}

/** The extension points a profile's `plugins` may name (KubeSchedulerConfiguration's Plugins). */
export const EXTENSION_POINT_KEYS = [
  'queueSort',
  'preEnqueue',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
] as const;
export type ExtensionPointKey = (typeof EXTENSION_POINT_KEYS)[number];

/** One point's set, as KubeSchedulerConfiguration writes it. `disabled: [{ name: '*' }]` turns every default off. */
export interface PluginSet {
  enabled?: { name: string; weight?: number }[];
  disabled?: { name: string }[];
}

/** One profile, in KubeSchedulerConfiguration's shape (v1). */
export interface ProfileConfig {
  schedulerName?: string;
  /** 0 (or unset) means upstream's adaptive default. */
  percentageOfNodesToScore?: number;
  plugins?: Partial<Record<ExtensionPointKey | 'multiPoint', PluginSet>>;
  pluginConfig?: { name: string; args?: Record<string, unknown> }[];
}

/** Which plugins a profile enables at each extension point, resolved once so the cycle never looks names up. */
export interface SchedulingProfile {
  schedulerName: string;
  queueSort?: SchedulerPlugin;
  preEnqueue: SchedulerPlugin[];
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
  /** Every plugin instance the profile uses (init is called on each once). */
  plugins: SchedulerPlugin[];
  /** The package that registered each plugin, by plugin name: logs of a failing plugin name it. */
  packages: ReadonlyMap<string, string>;
  percentageOfNodesToScore?: number;
  /** Where the next cycle's node walk starts (upstream's nextStartNodeIndex). */
  sampling: { next: number };
  /**
   * Set by the scheduler when pods are nominated: filters a node counting nominated pods of equal or
   * higher priority; undefined when the node has none (the plain filters then run).
   */
  nominatedFilter?: (state: CycleState, pod: Pod, node: NodeInfo) => SchedulingStatus | undefined;
}

/** Which method makes a plugin usable at each point. */
const IMPLEMENTS: Record<ExtensionPointKey, (p: SchedulerPlugin) => boolean> = {
  queueSort: (p) => !!p.queueSort,
  preEnqueue: (p) => !!p.preEnqueue,
  preFilter: (p) => !!p.preFilter,
  filter: (p) => !!p.filter,
  postFilter: (p) => !!p.postFilter,
  preScore: (p) => !!p.preScore,
  score: (p) => !!p.score,
  reserve: (p) => !!(p.reserve || p.unreserve),
  permit: (p) => !!p.permit,
  preBind: (p) => !!p.preBind,
  bind: (p) => !!p.bind,
  postBind: (p) => !!p.postBind,
};

const METHOD: Record<ExtensionPointKey, string> = {
  queueSort: 'queueSort',
  preEnqueue: 'preEnqueue',
  preFilter: 'preFilter',
  filter: 'filter',
  postFilter: 'postFilter',
  preScore: 'preScore',
  score: 'score',
  reserve: 'reserve',
  permit: 'permit',
  preBind: 'preBind',
  bind: 'bind',
  postBind: 'postBind',
};

type Registry = SchedulerPluginRegistry & { packageOf?(name: string): string | undefined };

function lookup(registry: Registry, name: string, point: string): SchedulerPlugin {
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
 * Resolves a profile against the registered plugins, as kube-scheduler resolves a KubeSchedulerConfiguration
 * profile whose defaults are "every registered plugin" (Skiff's multiPoint default): at each extension
 * point, the registered plugins that implement it, minus those `disabled` there or under `multiPoint`
 * (`*` disables them all), plus those `enabled` there or under `multiPoint`. Score weights come from
 * `score.enabled` / `multiPoint.enabled`, else the plugin's `defaultWeight`, else 1. `pluginConfig` args
 * give the profile its own copy of a plugin (`withArgs`).
 */
export function buildProfile(registry: Registry, config: ProfileConfig = {}): SchedulingProfile {
  const schedulerName = config.schedulerName ?? 'default-scheduler';
  const all = registry.list();
  const packages = new Map<string, string>();
  for (const { name } of all) {
    const owner = registry.packageOf?.(name);
    if (owner) packages.set(name, owner);
  }

  // Per-profile instances: a plugin that takes args gets its own copy in every profile (with the profile's
  // args, or none), so what it keeps from init() — its handle, the profile's filters — is this profile's.
  const args = new Map<string, Record<string, unknown>>();
  for (const entry of config.pluginConfig ?? []) {
    const plugin = lookup(registry, entry.name, 'pluginConfig');
    const given = Object.keys(entry.args ?? {}).filter((key) => key !== 'apiVersion' && key !== 'kind');
    if (given.length > 0 && !plugin.withArgs)
      throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_ARGS', { profile: schedulerName, name: entry.name, detail: 'it takes no args' });
    // KubeSchedulerConfiguration writes args as typed objects (apiVersion, kind): the plugin gets the fields.
    const { apiVersion: _apiVersion, kind: _kind, ...fields } = entry.args ?? {};
    args.set(entry.name, fields);
  }
  const instances = new Map<string, SchedulerPlugin>();
  for (const plugin of all) {
    if (!plugin.withArgs) continue;
    try {
      instances.set(plugin.name, plugin.withArgs(args.get(plugin.name) ?? {}));
    } catch (err) {
      throw new SchedulerError(
        'SKIFF_ERR_SCHEDULER_PROFILE_ARGS',
        { profile: schedulerName, name: plugin.name, detail: err instanceof Error ? err.message : String(err) },
        { cause: err },
      );
    }
  }
  const instance = (plugin: SchedulerPlugin) => instances.get(plugin.name) ?? plugin;

  const plugins = config.plugins ?? {};
  const multi = plugins.multiPoint ?? {};
  const multiDisabled = new Set((multi.disabled ?? []).map((d) => d.name));
  const weights = new Map<string, number>();
  for (const entry of multi.enabled ?? []) if (entry.weight !== undefined) weights.set(entry.name, entry.weight);
  for (const entry of plugins.score?.enabled ?? []) if (entry.weight !== undefined) weights.set(entry.name, entry.weight);

  const at = (point: ExtensionPointKey): SchedulerPlugin[] => {
    const set = plugins[point] ?? {};
    const disabled = new Set([...multiDisabled, ...(set.disabled ?? []).map((d) => d.name)]);
    const chosen: SchedulerPlugin[] = [];
    const add = (plugin: SchedulerPlugin) => {
      if (!chosen.some((p) => p.name === plugin.name)) chosen.push(plugin);
    };
    if (!disabled.has('*')) for (const plugin of all) if (IMPLEMENTS[point](plugin) && !disabled.has(plugin.name)) add(plugin);
    for (const entry of multi.enabled ?? []) {
      const plugin = lookup(registry, entry.name, 'multiPoint');
      if (IMPLEMENTS[point](plugin)) add(plugin);
    }
    for (const entry of set.enabled ?? []) {
      const plugin = lookup(registry, entry.name, point);
      if (!IMPLEMENTS[point](plugin)) throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_NOT_CAPABLE', { name: entry.name, point, method: METHOD[point] });
      add(plugin);
    }
    return chosen.map(instance);
  };

  const filterPoint = at('filter');
  const preFilterPoint = at('preFilter');
  const scorePoint = at('score');
  const score: ScorePluginEntry[] = scorePoint.map((plugin) => ({ plugin, weight: weights.get(plugin.name) ?? plugin.defaultWeight ?? 1 }));
  const scored = new Set(scorePoint.map((p) => p.name));
  const profile: SchedulingProfile = {
    schedulerName,
    queueSort: at('queueSort')[0],
    preEnqueue: at('preEnqueue'),
    preFilter: preFilterPoint,
    filter: filterPoint,
    postFilter: at('postFilter'),
    // A preScore only runs for a plugin that also scores in this profile.
    preScore: at('preScore').filter((p) => scored.has(p.name)),
    score,
    reserve: at('reserve'),
    permit: at('permit'),
    preBind: at('preBind'),
    bind: at('bind'),
    postBind: at('postBind'),
    plugins: [],
    packages,
    sampling: { next: 0 },
    ...(config.percentageOfNodesToScore !== undefined ? { percentageOfNodesToScore: config.percentageOfNodesToScore } : {}),
  };
  const used = new Map<string, SchedulerPlugin>();
  for (const key of EXTENSION_POINT_KEYS) {
    const list =
      key === 'score' ? score.map((e) => e.plugin) : key === 'queueSort' ? (profile.queueSort ? [profile.queueSort] : []) : (profile[key] as SchedulerPlugin[]);
    for (const plugin of list) used.set(plugin.name, plugin);
  }
  profile.plugins = [...used.values()];
  return profile;
}

/** Every profile of a KubeSchedulerConfiguration; names must be unique and share one queueSort. */
export function buildProfiles(registry: Registry, configs: ProfileConfig[], defaults: { percentageOfNodesToScore?: number } = {}): SchedulingProfile[] {
  const profiles: SchedulingProfile[] = [];
  const names = new Set<string>();
  for (const config of configs.length ? configs : [{}]) {
    const percentage = config.percentageOfNodesToScore ?? defaults.percentageOfNodesToScore;
    const profile = buildProfile(registry, { ...{}, ...config, ...(percentage !== undefined ? { percentageOfNodesToScore: percentage } : {}) });
    if (names.has(profile.schedulerName)) throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_DUPLICATE', { name: profile.schedulerName });
    names.add(profile.schedulerName);
    const first = profiles[0];
    if (first && first.queueSort?.name !== profile.queueSort?.name) {
      throw new SchedulerError('SKIFF_ERR_SCHEDULER_PROFILE_QUEUE_SORT', {
        profile: profile.schedulerName,
        got: profile.queueSort?.name ?? 'none',
        first: first.schedulerName,
        want: first.queueSort?.name ?? 'none',
      });
    }
    profiles.push(profile);
  }
  return profiles;
}
