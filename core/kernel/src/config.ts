import { cosmiconfig } from 'cosmiconfig';
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { errorMessage, isJsonObject } from '@skiff/api';
import { KernelError } from './errors.js';
import type { PluginSpec } from './plugin.js';
import { didYouMean } from './suggest.js';
import { MAX_API_SERVER_WORKERS } from './threads.js';

/** The cluster config a user writes (skiff.config.*, .skiffrc*, or the `skiff` key of package.json). */
export interface SkiffConfig {
  /** A preset name ("dev" → @skiff/preset-dev), a package name, or a path. Default: "dev". */
  preset?: string;
  /** Added to the preset's plugins; `[name, false]` removes one, `[name, {…}]` reconfigures it. */
  plugins?: PluginSpec[];
  /** Where the cluster keeps its state (LMDB, PKI, kubeconfig). Default: ./.skiff */
  dataDir?: string;
  /** API server address. Defaults: 127.0.0.1:6443. */
  host?: string;
  port?: number;
  /** How many kubelets (nodes) to run in this process. Default: 1. */
  nodes?: number;
  /**
   * The address pods and other machines reach this machine at: the nodes' InternalIP, the cluster DNS server's.
   * Default: the IPv4 address of the interface the default route leaves by (`hostAddress()`).
   */
  advertiseAddress?: string;
  /** pino level: trace, debug, info, warn, error, silent. Default: info. */
  logLevel?: string;
  /** The API server. */
  apiServer?: {
    /**
     * Threads that may serve the API, each with its own event loop over the same store (the primary's included).
     * Default: the number of cores for a kernel that names a `workerEntry` (skiff up, skiff apiserver), else 1.
     * 1 keeps the request path on one event loop, as one process always had it.
     */
    workers?: number;
    /**
     * When the worker threads start. `on-demand` (the default): one more when the primary's event loop has been
     * saturated for two seconds while a core of the machine stood idle, and a worker with no connection left is stopped
     * again. `at-start`: all of them with the API server, kept for the process's life.
     */
    workerStart?: 'on-demand' | 'at-start';
  };
  /**
   * Tracing (docs/tracing.md): `mode: 'on'` records every request and what it causes; the default `off` records
   * only what `skiff trace --next` arms. The sizes bound its memory.
   */
  trace?: {
    mode?: 'off' | 'on';
    /** Spans kept over all traces (default 20,000). */
    spans?: number;
    /** Spans one trace may record (default 5,000). */
    maxSpans?: number;
    /** A trace closes this many seconds after it opened (default 60)… */
    maxSeconds?: number;
    /** …or after this many seconds without a new span (default 10). */
    idleSeconds?: number;
  };
}

/**
 * Gives a config file type checking and editor completion: `export default defineConfig({ … })` in
 * skiff.config.mjs (with `// @ts-check`) or skiff.config.ts-compiled JavaScript.
 */
export function defineConfig(config: SkiffConfig): SkiffConfig {
  return config;
}

export interface ResolvedConfig extends SkiffConfig {
  preset: string;
  dataDir: string;
  host: string;
  port: number;
  nodes: number;
  logLevel: string;
  /** The folder plugins are resolved from (the config file's folder, or the working directory). */
  rootDir: string;
  /** The config file used, if any. */
  configFile?: string;
}

export const CONFIG_DEFAULTS = Object.freeze({
  preset: 'dev',
  dataDir: '.skiff',
  host: '127.0.0.1',
  port: 6443,
  nodes: 1,
  logLevel: 'info',
});

const KNOWN_TYPES: Record<string, string> = {
  preset: 'string',
  plugins: 'object',
  dataDir: 'string',
  host: 'string',
  port: 'number',
  nodes: 'number',
  advertiseAddress: 'string',
  logLevel: 'string',
  apiServer: 'object',
  trace: 'object',
};

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Checks a config (a file's, a preset's, or one given in code): known keys only, each of the right type. */
/** Checks a config's keys and the types of their values (plugin entries are checked as they are read). */
export function checkConfig(config: unknown, file: string): asserts config is SkiffConfig {
  if (!isJsonObject(config)) throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: 'the config must be an object' });
  for (const key of Object.keys(config)) {
    if (!(key in KNOWN_TYPES))
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
        file,
        detail: `unknown key "${key}"${didYouMean(key, Object.keys(KNOWN_TYPES))}; known keys: ${Object.keys(KNOWN_TYPES).join(', ')}`,
      });
  }
  for (const [key, type] of Object.entries(KNOWN_TYPES)) {
    if (config[key] !== undefined && typeof config[key] !== type)
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: `"${key}" must be a ${type} (got ${JSON.stringify(config[key])})` });
  }
  if (config.port !== undefined && (!Number.isInteger(config.port) || (config.port as number) < 0 || (config.port as number) > 65535))
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: `"port" must be an integer from 0 to 65535 (got ${config.port})` });
  if (config.nodes !== undefined && (!Number.isInteger(config.nodes) || (config.nodes as number) < 0))
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: `"nodes" must be a whole number >= 0 (got ${config.nodes})` });
  if (config.advertiseAddress !== undefined && !isIP(config.advertiseAddress as string))
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
      file,
      detail: `"advertiseAddress" must be an IP address (got ${JSON.stringify(config.advertiseAddress)})`,
    });
  if (config.apiServer !== undefined) checkApiServerConfig(config.apiServer, file);
  if (config.trace !== undefined) checkTraceConfig(config.trace, file);
  if (config.plugins !== undefined && !Array.isArray(config.plugins))
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: '"plugins" must be a list' });
  if (config.logLevel !== undefined && !LOG_LEVELS.includes(config.logLevel as string))
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
      file,
      detail: `"logLevel" must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(config.logLevel)})${didYouMean(String(config.logLevel), LOG_LEVELS)}`,
    });
}

function checkApiServerConfig(apiServer: unknown, file: string): void {
  if (!isJsonObject(apiServer)) throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: '"apiServer" must be an object' });
  const known = ['workers', 'workerStart'];
  for (const key of Object.keys(apiServer)) {
    if (!known.includes(key))
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
        file,
        detail: `unknown key "apiServer.${key}"${didYouMean(key, known)}; known keys: ${known.join(', ')}`,
      });
  }
  const { workers, workerStart } = apiServer;
  if (workerStart !== undefined && workerStart !== 'on-demand' && workerStart !== 'at-start')
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
      file,
      detail: `"apiServer.workerStart" must be "on-demand" or "at-start" (got ${JSON.stringify(workerStart)})`,
    });
  if (workers !== undefined && (!Number.isInteger(workers) || (workers as number) < 1 || (workers as number) > MAX_API_SERVER_WORKERS))
    throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
      file,
      detail: `"apiServer.workers" must be a whole number from 1 to ${MAX_API_SERVER_WORKERS} (got ${JSON.stringify(workers)})`,
    });
}

const TRACE_LIMITS: Record<string, [number, number]> = {
  spans: [100, 10_000_000],
  maxSpans: [10, 1_000_000],
  maxSeconds: [1, 86_400],
  idleSeconds: [1, 3_600],
};

function checkTraceConfig(trace: unknown, file: string): void {
  if (!isJsonObject(trace)) throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: '"trace" must be an object' });
  const known = ['mode', ...Object.keys(TRACE_LIMITS)];
  for (const [key, value] of Object.entries(trace)) {
    if (!known.includes(key))
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
        file,
        detail: `unknown key "trace.${key}"${didYouMean(key, known)}; known keys: ${known.join(', ')}`,
      });
    if (key === 'mode') {
      if (value !== 'on' && value !== 'off')
        throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: `"trace.mode" must be "on" or "off" (got ${JSON.stringify(value)})` });
      continue;
    }
    const [min, max] = TRACE_LIMITS[key]!;
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max)
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', {
        file,
        detail: `"trace.${key}" must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`,
      });
  }
}

/**
 * Finds and loads the cluster config. With `file`, loads exactly that file; otherwise searches `cwd`
 * for skiff.config.*, .skiffrc* and package.json#skiff. No config file is fine: defaults apply.
 */
export async function loadConfig(options: { cwd?: string; file?: string } = {}): Promise<{ config: SkiffConfig; file?: string; rootDir: string }> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const explorer = cosmiconfig('skiff', {
    searchPlaces: [
      'package.json',
      '.skiffrc',
      '.skiffrc.json',
      '.skiffrc.yaml',
      '.skiffrc.yml',
      '.skiffrc.js',
      '.skiffrc.mjs',
      '.skiffrc.cjs',
      'skiff.config.js',
      'skiff.config.mjs',
      'skiff.config.cjs',
      'skiff.config.json',
      'skiff.config.yaml',
      'skiff.config.yml',
    ],
    searchStrategy: 'none',
  });
  let result;
  if (options.file) {
    const file = resolve(cwd, options.file);
    if (!existsSync(file)) throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_NOT_FOUND', { file });
    try {
      result = await explorer.load(file);
    } catch (err) {
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file, detail: errorMessage(err).split('\n')[0] ?? '' });
    }
  } else {
    try {
      result = await explorer.search(cwd);
    } catch (err) {
      throw new KernelError('SKIFF_ERR_KERNEL_CONFIG_INVALID', { file: cwd, detail: errorMessage(err).split('\n')[0] ?? '' });
    }
  }
  if (!result || result.isEmpty) return { config: {}, file: result?.filepath, rootDir: result ? dirname(result.filepath) : cwd };
  const config: unknown = result.config;
  checkConfig(config, result.filepath);
  return { config, file: result.filepath, rootDir: dirname(result.filepath) };
}
