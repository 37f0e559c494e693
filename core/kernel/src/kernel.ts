import { asValue, createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import semver from 'semver';
import { destination as pinoDestination, pino } from 'pino';
import { createHooks, type Hooks } from './hooks.js';
import { applyPlugin, namePluginsInErrors } from './tap-errors.js';
import { Tracer, TRACE_DEFAULTS } from './tracing/tracer.js';
import { KernelError } from './errors.js';
import { checkOptions } from './options.js';
import { packageVersion } from './package-info.js';
import { CONFIG_DEFAULTS, type ResolvedConfig } from './config.js';
import type { SkiffPlugin } from './plugin.js';
import type { ComponentName, Components } from './components.js';
import type { Logger } from './types/logger.js';
import { defaultApiServerThreads, KernelThreads, type ThreadOptions, type WorkerEntry } from './threads.js';
import { createMetricsRegistry, shareMetricsAcrossThreads, type Registry } from './metrics.js';

export const KERNEL_VERSION = packageVersion(new URL('../package.json', import.meta.url)).version;

/** Components the kernel registers itself; every plugin may resolve them without declaring them. */
const KERNEL_COMPONENTS: readonly ComponentName[] = ['kernel', 'config', 'logger', 'metrics', 'tracer'];

export interface LoadedPlugin {
  plugin: SkiffPlugin<any>;
  options: unknown;
}

/**
 * A pino logger at `level` writing JSON lines to `destination` (default: stderr, synchronously, so stdout stays for
 * the CLI's short human lines and nothing is lost when the process ends).
 */
export function createLogger(level: string, destination?: { write(line: string): unknown }): Logger {
  return pino({ level, base: undefined }, destination ?? pinoDestination({ fd: 2, sync: true })) as unknown as Logger;
}

export interface KernelOptions {
  config?: Partial<ResolvedConfig>;
  logger?: Logger;
  /** Set in an API server worker thread: its place among the threads (see KernelThreads). */
  thread?: ThreadOptions;
  /** How to build this kernel's request path in a worker thread (needed for `apiServer.workers` > 1). */
  workerEntry?: WorkerEntry;
  /** False: hooks without the tracing check at all (the tracing benchmark's baseline); `trace` config is then inert. */
  tracing?: boolean;
}

/**
 * The kernel: the hook catalogue, the DI container, the loaded plugins and the lifecycle. It knows no
 * component by name — the API server, store, controllers, scheduler and kubelets are plugins too.
 */
export class Kernel {
  readonly version = KERNEL_VERSION;
  readonly hooks: Hooks;
  /** Records traces of requests and what they cause (component `tracer`); see docs/tracing.md. */
  readonly tracer: Tracer;
  readonly container: AwilixContainer;
  readonly logger: Logger;
  /** This kernel's Prometheus registry (component `metrics`); see metrics.ts. */
  readonly metrics: Registry;
  config: ResolvedConfig;
  /** Which thread this kernel runs on, and how many serve the API (config `apiServer.workers`). */
  readonly threads: KernelThreads;
  /** How to build this kernel's request path again in a worker thread; undefined: it cannot be. */
  workerEntry: WorkerEntry | undefined;
  private readonly plugins = new Map<string, LoadedPlugin>();
  private state: 'new' | 'prepared' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';

  constructor(options: KernelOptions = {}) {
    this.config = { ...{}, ...CONFIG_DEFAULTS, rootDir: process.cwd(), ...options.config } as ResolvedConfig;
    this.hooks = namePluginsInErrors(createHooks(), options.tracing !== false);
    this.tracer = new Tracer({ ...{}, ...TRACE_DEFAULTS, ...this.config.trace });
    this.logger = options.logger ?? createLogger(this.config.logLevel);
    this.container = createContainer({ injectionMode: InjectionMode.PROXY, strict: true });
    this.threads = new KernelThreads(() => this.config.apiServer?.workers ?? (this.workerEntry ? defaultApiServerThreads() : 1), options.thread);
    this.workerEntry = options.workerEntry;
    this.metrics = createMetricsRegistry({ defaultMetrics: this.threads.primary });
    shareMetricsAcrossThreads(this.threads, this.metrics);
    this.container.register({ kernel: asValue(this), logger: asValue(this.logger), tracer: asValue(this.tracer), metrics: asValue(this.metrics) });
  }

  /** Checks a plugin's metadata and options and lets it tap hooks. */
  use<O>(plugin: SkiffPlugin<O>, options?: unknown): this {
    const name = typeof plugin?.name === 'string' ? plugin.name : '(unnamed)';
    if (!plugin || typeof plugin !== 'object' || typeof plugin.apply !== 'function')
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_INVALID', { name, detail: 'its default export must be an object with name and apply(kernel, options)' });
    for (const field of ['name', 'version', 'kernel'] as const) {
      if (typeof plugin[field] !== 'string' || !plugin[field])
        throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_INVALID', { name, detail: `"${field}" must be a non-empty string` });
    }
    if (!semver.validRange(plugin.kernel))
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_INVALID', { name, detail: `"kernel" is not a semver range: ${plugin.kernel}` });
    if (!semver.satisfies(KERNEL_VERSION, plugin.kernel, { includePrerelease: true }))
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_KERNEL_RANGE', { name, range: plugin.kernel, version: KERNEL_VERSION });
    if (this.plugins.has(plugin.name)) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_DUPLICATE', { name });
    let checked: unknown = options ?? {};
    if (plugin.options) {
      try {
        checked = checkOptions(plugin.options, options ?? {});
      } catch (err) {
        throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name, detail: (err as Error).message });
      }
    } else if (options && Object.keys(options as object).length > 0) {
      throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name, detail: `takes no options (got ${Object.keys(options as object).join(', ')})` });
    }
    this.plugins.set(plugin.name, { plugin, options: checked });
    applyPlugin(plugin, this.viewFor(plugin), checked as O);
    return this;
  }

  has(pluginName: string): boolean {
    return this.plugins.has(pluginName);
  }

  listPlugins(): LoadedPlugin[] {
    return [...this.plugins.values()];
  }

  /** A shared component by name, typed by the `Components` interface; throws if none is registered. */
  resolve<K extends ComponentName>(name: K): Components[K];
  resolve(name: string): unknown;
  resolve(name: string): unknown {
    if (!this.container.hasRegistration(name)) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_MISSING', { name: name, detail: this.providerHint(name) });
    return this.container.resolve(name);
  }

  /** Whether a component is registered under `name`. */
  hasComponent(name: ComponentName | (string & {})): boolean {
    return this.container.hasRegistration(name);
  }

  /**
   * Registers a shared component. A name is taken once: replacing a component another plugin
   * registered is an error unless `replace` says it is meant (an etcd store standing in for LMDB).
   */
  provide<K extends ComponentName>(name: K, value: Components[K], options?: { replace?: boolean }): void;
  provide(name: string, value: unknown, options?: { replace?: boolean }): void;
  provide(name: string, value: unknown, options: { replace?: boolean } = {}): void {
    if (this.container.hasRegistration(name) && !options.replace) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_EXISTS', { name });
    this.container.register(name, asValue(value));
  }

  /**
   * Taps start and stop for one component at a lifecycle stage; stop runs at the negated stage so
   * components stop in reverse order.
   */
  lifecycle(name: string, stage: number, handlers: { start?: () => Promise<void> | void; stop?: () => Promise<void> | void }): void {
    if (handlers.start) {
      const start = handlers.start;
      this.hooks.start.tapPromise({ name, stage }, async () => {
        try {
          await start();
        } catch (err) {
          if (err instanceof KernelError) throw err;
          throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT', { name, detail: (err as Error).message }, { cause: err });
        }
      });
    }
    if (handlers.stop) {
      const stop = handlers.stop;
      this.hooks.stop.tapPromise({ name, stage: -stage }, async () => {
        await stop();
      });
    }
  }

  /**
   * Everything `start` does before the start hook: checks dependencies and contracts, runs configure and components.
   * Nothing is started, so a kernel that is only prepared (`skiff plugins`) shows the whole cluster's taps and needs
   * no stop. `start` prepares a kernel that is not prepared yet.
   */
  prepare(): void {
    if (this.state === 'prepared') return;
    if (this.state !== 'new') throw new Error(`kernel cannot prepare: it is ${this.state}`);
    for (const { plugin } of this.plugins.values()) {
      for (const dependency of plugin.dependencies ?? []) {
        if (!this.plugins.has(dependency)) throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_DEPENDENCY', { name: plugin.name, dependency });
      }
    }
    this.checkContracts();
    this.config = this.hooks.configure.call(this.config);
    this.container.register({ config: asValue(this.config) });
    this.hooks.components.call(this.container);
    this.state = 'prepared';
  }

  /** Prepares the kernel (see `prepare`), then starts everything and calls ready. */
  async start(): Promise<void> {
    if (this.state !== 'new' && this.state !== 'prepared') throw new Error(`kernel cannot start: it is ${this.state}`);
    this.prepare();
    this.state = 'starting';
    try {
      await this.hooks.start.promise();
      this.checkProvided();
      this.state = 'running';
      await this.hooks.ready.promise();
    } catch (err) {
      await this.stop().catch((stopErr) => this.logger.error({ err: stopErr }, 'stop after failed start'));
      throw err;
    }
  }

  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    await this.hooks.stop.promise();
    this.tracer.close();
    this.state = 'stopped';
  }

  /**
   * Before anything starts: each component is provided by one plugin at most, and each one a plugin
   * needs is provided by some loaded plugin.
   */
  private checkContracts(): void {
    const providers = new Map<string, string>();
    for (const { plugin } of this.plugins.values()) {
      for (const component of plugin.provides ?? []) {
        const other = providers.get(component);
        if (other) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_TWICE', { name: component, first: other, second: plugin.name });
        providers.set(component, plugin.name);
      }
    }
    for (const { plugin } of this.plugins.values()) {
      for (const component of plugin.needs ?? []) {
        if (!providers.has(component) && !this.container.hasRegistration(component))
          throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_NEEDED', { name: plugin.name, component });
      }
    }
  }

  /** Once started: every plugin provided what it declared it would. */
  private checkProvided(): void {
    for (const { plugin } of this.plugins.values()) {
      for (const component of plugin.provides ?? []) {
        if (!this.container.hasRegistration(component)) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_NOT_PROVIDED', { name: plugin.name, component });
      }
    }
  }

  /**
   * The kernel as one plugin's `apply` (and every tap it registers) sees it: the same kernel, except that
   * `resolve` reaches only the components the plugin declared, so its declarations are the whole truth about
   * what it uses.
   */
  private viewFor(plugin: SkiffPlugin<any>): Kernel {
    const declared = new Set<string>([...KERNEL_COMPONENTS, ...(plugin.needs ?? []), ...(plugin.wants ?? []), ...(plugin.provides ?? [])]);
    const resolve = (name: string): unknown => {
      if (!declared.has(name)) throw new KernelError('SKIFF_ERR_KERNEL_COMPONENT_UNDECLARED', { name: plugin.name, component: name });
      return Kernel.prototype.resolve.call(this, name);
    };
    return new Proxy(this, { get: (target, key, receiver) => (key === 'resolve' ? resolve : Reflect.get(target, key, receiver)) });
  }

  private providerHint(component: string): string {
    const provider = [...this.plugins.values()].find(({ plugin }) => plugin.provides?.includes(component as ComponentName));
    if (provider) return `plugin "${provider.plugin.name}" provides it once it has started`;
    return 'no loaded plugin provides it';
  }

  get running(): boolean {
    return this.state === 'running';
  }
}
