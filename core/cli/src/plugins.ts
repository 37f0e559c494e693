import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { createCluster, createLogger, pluginInCharge, type Hooks, type Kernel } from '@skiff/kernel';
import { ClusterLookup } from './cluster-dir.js';
import { SERVER_UMASK } from './data-dir.js';
import { readUpRecord } from './up-record.js';
import type { Output } from './up.js';

/** Hooks that hand a registry to their taps: their taps only register, so calling them with a recorder is harmless. */
const REGISTRATION_HOOKS = ['resources', 'initializers', 'controllers', 'schedulerPlugins', 'runtimes', 'networks', 'serviceProxies', 'volumes'] as const;

export interface TapReport {
  /** tapable's stage (0 unless the tap set one). */
  stage: number;
  /** The package whose code registered the tap. */
  plugin: string;
  name: string;
  /** For a registration hook: the names this tap registered. */
  registers?: string[];
}

export interface PluginsReport {
  preset: string;
  dataDir: string;
  plugins: Array<{ name: string; version: string; kernel: string }>;
  /** Every hook with taps, in the catalogue's order; taps in the order the hook calls them. */
  hooks: Array<{ name: string; kind: string; taps: TapReport[] }>;
}

/** What a registry's item is called: its `name`, else group/resource for a kind. */
function itemName(item: unknown): string {
  if (typeof item !== 'object' || item === null) return String(item);
  const { name, group, resource } = item as { name?: unknown; group?: unknown; resource?: unknown };
  if (typeof name === 'string') return name;
  if (typeof resource === 'string') return group ? `${String(group)}/${resource}` : resource;
  return '(unnamed)';
}

/**
 * A stand-in for any registry a registration hook hands over: `register` records the item and the plugin tap that
 * registered it; `get`/`list` see what was registered; anything else answers undefined.
 */
function recordingRegistry(record: (tapKey: string, name: string) => void): unknown {
  const items: unknown[] = [];
  return new Proxy(
    {},
    {
      get(_, key) {
        if (key === 'register')
          return (item: unknown) => {
            items.push(item);
            const who = pluginInCharge();
            record(`${who?.pluginName ?? ''}\0${who?.tapName ?? ''}`, itemName(item));
          };
        if (key === 'list') return () => [...items];
        if (key === 'get' || key === 'byKind') return (...args: unknown[]) => items.find((item) => itemName(item) === args[args.length - 1]);
        if (key === 'names' || key === 'known') return () => items.map(itemName);
        return () => undefined;
      },
    },
  );
}

/** Each registration hook called once with a recorder: per hook, per tap (plugin and tap name), what it registered. */
function registeredNames(kernel: Kernel): Map<string, Map<string, string[]>> {
  const result = new Map<string, Map<string, string[]>>();
  for (const hookName of REGISTRATION_HOOKS) {
    const byTap = new Map<string, string[]>();
    const registry = recordingRegistry((tapKey, name) => byTap.set(tapKey, [...(byTap.get(tapKey) ?? []), name]));
    (kernel.hooks[hookName] as { call(registry: unknown): void }).call(registry);
    result.set(hookName, byTap);
  }
  return result;
}

/** The report of a kernel that was prepared (not started): its plugins, and each hook's taps in call order. */
export function pluginsReport(kernel: Kernel, dataDir: string): PluginsReport {
  const registered = registeredNames(kernel);
  const hooks: PluginsReport['hooks'] = [];
  for (const [name, hook] of Object.entries(kernel.hooks) as Array<[keyof Hooks, Hooks[keyof Hooks]]>) {
    if (hook.taps.length === 0) continue;
    const taps = hook.taps.map((tap) => {
      const { stage, plugin } = tap as { stage?: number; plugin?: string };
      const report: TapReport = { stage: stage ?? 0, plugin: plugin ?? tap.name, name: tap.name };
      const names = registered.get(name)?.get(`${report.plugin}\0${tap.name}`);
      if (registered.has(name)) report.registers = names ?? [];
      return report;
    });
    hooks.push({ name, kind: hook.constructor.name, taps });
  }
  return {
    preset: kernel.config.preset,
    dataDir,
    plugins: kernel.listPlugins().map(({ plugin }) => ({ name: plugin.name, version: plugin.version, kernel: plugin.kernel })),
    hooks,
  };
}

function table(rows: string[][], indent = ''): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `${indent}${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]! + 2))).join('')}`.trimEnd());
}

/** The report as text: the plugins as a table, then per hook its kind and taps (stage, plugin, tap, what it registers). */
export function formatPluginsReport(report: PluginsReport, cwd: string): string {
  const lines = [`preset ${report.preset}, data dir ${relative(cwd, report.dataDir) || '.'}: ${report.plugins.length} plugins`, ''];
  lines.push(...table([['PLUGIN', 'VERSION', 'KERNEL'], ...report.plugins.map((p) => [p.name, p.version, p.kernel])]));
  lines.push('', 'hooks, each with its taps in the order it calls them (stage, plugin, tap):');
  for (const hook of report.hooks) {
    lines.push('', `${hook.name} (${hook.kind}, ${hook.taps.length} tap${hook.taps.length === 1 ? '' : 's'})`);
    const rows = hook.taps.map((tap) => {
      const registers = tap.registers === undefined ? '' : tap.registers.length ? `→ ${tap.registers.join(', ')}` : '→ (nothing)';
      return [String(tap.stage), tap.plugin, tap.name === tap.plugin ? '' : tap.name, registers];
    });
    lines.push(...table(rows, '  '));
  }
  return lines.join('\n');
}

/**
 * `skiff plugins`: the plugins the cluster of a data dir loads (its preset and config, as `skiff up` reads them, with
 * the preset the last `skiff up` there used) and, per hook, the taps in call order. Offline: the kernel is prepared,
 * never started, so it works on a stopped cluster as on a running one.
 */
export async function plugins(argv: string[], output: Output, cwd: string): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      config: { type: 'string', short: 'c' },
      preset: { type: 'string' },
      json: { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  const dataDir = await new ClusterLookup(cwd, { dataDir: values['data-dir'], configFile: values.config }).dataDir();
  const record = readUpRecord(dataDir);
  // Components may write into the data dir while they are prepared (a generated encryption key): owner-only, as skiff up.
  process.umask(SERVER_UMASK);
  const kernel = await createCluster({
    cwd,
    configFile: values.config ?? record?.configFile,
    overrides: { preset: values.preset ?? record?.preset, dataDir },
    logger: createLogger('silent'),
  });
  kernel.prepare();
  const report = pluginsReport(kernel, dataDir);
  output.out(values.json ? JSON.stringify(report, null, 2) : formatPluginsReport(report, cwd));
}
