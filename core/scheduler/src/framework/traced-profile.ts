import { recordSpan, type NodeInfo, type SchedulerPlugin, type TraceContext } from '@skiff/kernel';
import type { SchedulingProfile } from './profile.js';

/** The extension points whose calls a traced cycle times, per plugin. */
const TIMED = ['preFilter', 'filter', 'postFilter', 'preScore', 'score', 'normalizeScore', 'reserve', 'permit', 'preBind', 'bind'] as const;
type TimedPoint = (typeof TIMED)[number];
const TIMED_SET: ReadonlySet<string> = new Set(TIMED);

/** Nodes named per plugin in a span (the rest are counted). */
const NODES_NAMED = 20;

/** One plugin at one extension point over a scheduling attempt: calls, time, and what it said of each node. */
interface Tally {
  point: TimedPoint;
  plugin: string;
  calls: number;
  ms: number;
  first: number;
  rejected: string[];
  scores: string[];
  more: number;
}

function nodeName(arg: unknown): string | undefined {
  const info = arg as NodeInfo | undefined;
  return info?.node?.metadata?.name;
}

/**
 * A copy of a profile whose plugins time their calls into `tallies` (one proxy per plugin, so a plugin's identity
 * is the same in every list, as the cycle expects). Only pods being traced are scheduled through it: the plain
 * profile stays untouched.
 */
export function tracedProfile(profile: SchedulingProfile, tallies: Map<string, Tally>): SchedulingProfile {
  const proxies = new Map<SchedulerPlugin, SchedulerPlugin>();
  const proxy = (plugin: SchedulerPlugin): SchedulerPlugin => {
    let wrapped = proxies.get(plugin);
    if (wrapped) return wrapped;
    wrapped = new Proxy(plugin, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || typeof property !== 'string' || !TIMED_SET.has(property)) return value;
        const point = property as TimedPoint;
        return (...args: unknown[]) => {
          const key = `${point}/${target.name}`;
          let tally = tallies.get(key);
          const began = performance.timeOrigin + performance.now();
          if (!tally) tallies.set(key, (tally = { point, plugin: target.name, calls: 0, ms: 0, first: began, rejected: [], scores: [], more: 0 }));
          const started = performance.now();
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          const note = (answer: unknown) => {
            tally!.calls++;
            tally!.ms += performance.now() - started;
            const node = point === 'filter' || point === 'score' ? nodeName(args[2]) : undefined;
            if (node === undefined) return answer;
            if (tally!.rejected.length + tally!.scores.length >= NODES_NAMED) tally!.more++;
            else if (point === 'score') tally!.scores.push(`${node}=${String(answer)}`);
            else {
              const status = answer as { code?: string; reasons?: string[] } | null;
              if (status && status.code !== 'Success') tally!.rejected.push(`${node}: ${status.reasons?.join(', ') || status.code}`);
            }
            return answer;
          };
          return result instanceof Promise ? result.then(note) : note(result);
        };
      },
    });
    proxies.set(plugin, wrapped);
    return wrapped;
  };
  const traced: SchedulingProfile = {
    ...{},
    ...profile,
    preFilter: profile.preFilter.map(proxy),
    filter: profile.filter.map(proxy),
    postFilter: profile.postFilter.map(proxy),
    preScore: profile.preScore.map(proxy),
    score: profile.score.map((entry) => ({ ...{}, ...entry, plugin: proxy(entry.plugin) })),
    reserve: profile.reserve.map(proxy),
    permit: profile.permit.map(proxy),
    preBind: profile.preBind.map(proxy),
    bind: profile.bind.map(proxy),
  };
  profileTallies.set(traced, tallies);
  return traced;
}

const profileTallies = new WeakMap<SchedulingProfile, PluginTallies>();

/** The tallies of a traced profile (undefined for a plain one). */
export function talliesOf(profile: SchedulingProfile): PluginTallies | undefined {
  return profileTallies.get(profile);
}

export type PluginTallies = Map<string, Tally>;

/** One span per plugin and extension point under `parent`: its time (the sum of its calls) and what it said of the nodes. */
export function recordTallies(parent: TraceContext, tallies: PluginTallies, packages: ReadonlyMap<string, string>): void {
  for (const tally of tallies.values()) {
    const attrs: Record<string, string | number> = { calls: tally.calls };
    if (tally.rejected.length) attrs.result = `rejected ${tally.rejected.join('; ')}`;
    if (tally.scores.length) attrs.result = `scores ${tally.scores.join(' ')}`;
    if (tally.more) attrs.moreNodes = tally.more;
    const plugin = packages.get(tally.plugin);
    recordSpan(
      parent,
      { name: `${tally.point} ${tally.plugin}`, kind: 'scheduler', ...(plugin ? { plugin } : {}), attrs },
      tally.first,
      tally.first + tally.ms,
    );
  }
  tallies.clear();
}
