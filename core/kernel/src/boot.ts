import { dirname, resolve } from 'node:path';
import { errorMessage, isJsonObject } from '@skiff/api';
import { Kernel } from './kernel.js';
import { KernelError } from './errors.js';
import { checkConfig, CONFIG_DEFAULTS, loadConfig, type ResolvedConfig, type SkiffConfig } from './config.js';
import { didYouMean } from './suggest.js';
import { importDefault, resolveModule } from './resolve.js';
import type { PluginSpec, SkiffPlugin, SkiffPreset } from './plugin.js';
import type { Logger } from './types/logger.js';
import type { ThreadOptions, WorkerEntry } from './threads.js';

interface PluginEntry {
  /** The plugin's name as written (package name or path) or the plugin object itself. */
  ref: string | SkiffPlugin<any>;
  options: Record<string, unknown> | false;
  /** Where a name is resolved from. */
  fromDir: string;
  /** The config file or preset that names it, for messages. */
  where: string;
}

function specName(ref: string | SkiffPlugin<any>): string {
  return typeof ref === 'string' ? ref : ref.name;
}

function normaliseSpec(spec: PluginSpec, fromDir: string, where: string): PluginEntry {
  if (typeof spec === 'string') return { ref: spec, options: {}, fromDir, where };
  if (Array.isArray(spec)) {
    const [ref, options] = spec;
    if (typeof ref !== 'string' && (typeof ref !== 'object' || ref === null))
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file: where, detail: `a plugin entry must start with a name (got ${JSON.stringify(ref)})` });
    if (options !== undefined && options !== false && (typeof options !== 'object' || options === null || Array.isArray(options)))
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file: where, detail: `options of plugin "${specName(ref)}" must be an object or false` });
    return { ref, options: options ?? {}, fromDir, where };
  }
  if (typeof spec === 'object' && spec !== null && typeof spec.apply === 'function') return { ref: spec, options: {}, fromDir, where };
  throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file: where, detail: `cannot read plugin entry ${JSON.stringify(spec)}` });
}

/** Merges plugin lists: a later entry with the same name replaces the options of an earlier one, or removes it. */
function mergeEntries(base: PluginEntry[], added: PluginEntry[]): PluginEntry[] {
  const out = [...base];
  for (const entry of added) {
    const i = out.findIndex((e) => specName(e.ref) === specName(entry.ref));
    if (entry.options === false) {
      if (i < 0) {
        const name = specName(entry.ref);
        throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
          file: entry.where,
          detail: `cannot remove plugin "${name}": it is not loaded${didYouMean(
            name,
            out.map((e) => specName(e.ref)),
          )}`,
        });
      }
      out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = { ...{}, ...out[i]!, options: { ...{}, ...(out[i]!.options || {}), ...entry.options } };
    } else out.push(entry);
  }
  return out;
}

function presetCandidates(name: string): string[] {
  if (name.startsWith('.') || name.startsWith('/') || name.startsWith('@') || name.includes('preset')) return [name];
  return [`@skiff/preset-${name}`, `skiff-preset-${name}`, name];
}

const OWN_DIR = dirname(new URL(import.meta.url).pathname);

async function loadPreset(name: string, fromDir: string, chain: string[]): Promise<{ entries: PluginEntry[]; config: Record<string, unknown> }> {
  if (chain.includes(name)) throw new KernelError('SKIFF_ERR_KERNEL_PRESET_CYCLE', { cycle: [...chain, name].join(' → ') });
  const candidates = presetCandidates(name);
  let file: string | undefined;
  for (const candidate of candidates) {
    file = resolveModule(candidate, fromDir) ?? resolveModule(candidate, OWN_DIR);
    if (file) break;
  }
  if (!file) throw new KernelError('SKIFF_ERR_KERNEL_PRESET_NOT_FOUND', { name, candidates: candidates.join(', '), from: fromDir });
  const preset = await importDefault(file);
  if (!isPreset(preset)) throw new KernelError('SKIFF_ERR_KERNEL_PRESET_INVALID', { name, detail: 'its default export must be { name, plugins: [...] }' });
  if (preset.config) checkConfig(preset.config, `preset ${name}`);
  const presetDir = dirname(file);
  let entries: PluginEntry[] = [];
  let config: Record<string, unknown> = {};
  for (const parent of preset.extends ?? []) {
    const loaded = await loadPreset(parent, presetDir, [...chain, name]);
    entries = mergeEntries(entries, loaded.entries);
    config = { ...{}, ...config, ...loaded.config };
  }
  entries = mergeEntries(
    entries,
    preset.plugins.map((p) => normaliseSpec(p, presetDir, `preset ${name}`)),
  );
  return { entries, config: { ...{}, ...config, ...(preset.config ?? {}) } };
}

async function loadPlugin(entry: PluginEntry, rootDir: string): Promise<SkiffPlugin<any>> {
  if (typeof entry.ref !== 'string') return entry.ref;
  const name = entry.ref;
  // The user's folder first (their installed plugins win), then the preset's, then the kernel's own.
  const file = resolveModule(name, rootDir) ?? resolveModule(name, entry.fromDir) ?? resolveModule(name, OWN_DIR);
  if (!file) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_NOT_FOUND', { name, from: rootDir });
  let plugin: unknown;
  try {
    plugin = await importDefault(file);
  } catch (err) {
    throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_LOAD', { name, detail: errorMessage(err).split('\n')[0] ?? '' }, { cause: err });
  }
  if (!isPlugin(plugin))
    throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_INVALID', { name, detail: 'its default export must be an object with name and apply(kernel, options)' });
  return plugin;
}

/** What a preset module exports, as far as loading it relies on (its entries are checked as they are read). */
function isPreset(value: unknown): value is SkiffPreset {
  return isJsonObject(value) && Array.isArray(value.plugins);
}

/** What a plugin module exports, as far as loading it relies on (`use` checks its metadata). */
function isPlugin(value: unknown): value is SkiffPlugin<any> {
  return isJsonObject(value) && typeof value.apply === 'function';
}

export interface BootOptions {
  /** Where to look for a config file, and what relative paths are resolved from. Default: process.cwd(). */
  cwd?: string;
  /** An explicit config file (the CLI's --config). */
  configFile?: string;
  /** A config object used instead of a file (tests, @skiff/testing). */
  config?: SkiffConfig;
  /** Values that win over the file and the preset (the CLI's flags). */
  overrides?: SkiffConfig;
  /** The kernel's logger, or a function that makes it from the resolved config (to write into the data dir, say). */
  logger?: Logger | ((config: ResolvedConfig) => Logger);
  /** For an API server worker thread's kernel (see KernelOptions.thread). */
  thread?: ThreadOptions;
  /** How to build the request path of this cluster in an API server worker thread (see KernelOptions.workerEntry). */
  workerEntry?: WorkerEntry;
  /** False: no tracing check on the hooks at all (see KernelOptions.tracing; the tracing benchmark's baseline). */
  tracing?: boolean;
}

/** Loads the config, resolves the preset chain and every plugin, and returns a kernel ready to start. */
export async function createCluster(options: BootOptions = {}): Promise<Kernel> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const loaded = options.config ? { config: options.config, file: undefined, rootDir: cwd } : await loadConfig({ cwd, file: options.configFile });
  const fileConfig = loaded.config;
  if (options.config) checkConfig(options.config, 'passed to createCluster');
  const overrides: unknown = Object.fromEntries(Object.entries(options.overrides ?? {}).filter(([, v]) => v !== undefined));
  checkConfig(overrides, 'flags');
  const presetName = overrides.preset ?? fileConfig.preset ?? CONFIG_DEFAULTS.preset;
  const preset = await loadPreset(presetName, loaded.rootDir, []);
  const where = loaded.file ?? 'config';
  const entries = mergeEntries(
    preset.entries,
    (fileConfig.plugins ?? []).map((p) => normaliseSpec(p, loaded.rootDir, where)),
  );
  const merged = { ...{}, ...CONFIG_DEFAULTS, ...preset.config, ...fileConfig, ...overrides };
  const config: ResolvedConfig = {
    ...{},
    ...merged,
    preset: presetName,
    dataDir: resolve(loaded.rootDir, merged.dataDir),
    rootDir: loaded.rootDir,
    configFile: loaded.file,
  };
  delete config.plugins;
  const logger = typeof options.logger === 'function' ? options.logger(config) : options.logger;
  const kernel = new Kernel({
    config,
    logger,
    thread: options.thread,
    workerEntry: options.workerEntry,
    ...(options.tracing === false ? { tracing: false } : {}),
  });
  const plugins = await Promise.all(entries.map((entry) => loadPlugin(entry, loaded.rootDir)));
  plugins.forEach((plugin, i) => kernel.use(plugin, entries[i]!.options || {}));
  return kernel;
}
