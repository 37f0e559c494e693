import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createCluster, Kernel, type ResolvedConfig, type SkiffConfig, type ThreadOptions } from '@skiff/kernel';
import { parseUpArgs } from './args.js';
import { componentKubeconfigFile, writeComponentKubeconfigs } from './component-kubeconfigs.js';
import { ensurePrivateDataDir, SERVER_UMASK } from './data-dir.js';
import { logTarget, targetLogger, type LogChoice } from './logs.js';
import { pluginComponents, runsIn, type Component } from './roles.js';
import type { Output } from './up.js';

/** The components that run apart from the API server and reach it over HTTPS. */
export type SeparateComponent = 'controller-manager' | 'scheduler';

const COMPONENT_PLUGINS: Readonly<Record<SeparateComponent, string>> = Object.freeze({
  'controller-manager': '@skiff/controller-manager',
  scheduler: '@skiff/scheduler',
});

export interface ComponentArgs {
  configFile?: string;
  overrides: SkiffConfig;
  /** API servers to use instead of the kubeconfig's own, in failover order. */
  servers?: string[];
  /** Default: `<data dir>/<component>.kubeconfig`. */
  kubeconfig?: string;
  leaderElect: boolean;
}

/** Parses `skiff controller-manager` / `skiff scheduler` flags; throws an Error whose message is the one line to show. */
export function parseComponentArgs(argv: string[]): ComponentArgs {
  let leaderElect = true;
  const rest: string[] = [];
  for (const arg of argv) {
    const match = /^--leader-elect(?:=(.*))?$/.exec(arg);
    if (!match) rest.push(arg);
    else if (match[1] === undefined || match[1] === 'true') leaderElect = true;
    else if (match[1] === 'false') leaderElect = false;
    else throw new Error(`--leader-elect takes true or false (got "${match[1]}")`);
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      preset: { type: 'string' },
      config: { type: 'string', short: 'c' },
      'data-dir': { type: 'string' },
      server: { type: 'string', multiple: true },
      kubeconfig: { type: 'string' },
      'log-level': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  const servers = values.server?.flatMap((list) => list.split(',')).map((server) => server.trim());
  for (const server of servers ?? []) {
    let url: URL | undefined;
    try {
      url = new URL(server);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:') throw new Error(`--server takes https URLs such as https://10.0.0.1:6443, comma-separated (got "${server}")`);
  }
  return {
    configFile: values.config,
    overrides: { preset: values.preset, dataDir: values['data-dir'], logLevel: values['log-level'] },
    servers,
    kubeconfig: values.kubeconfig,
    leaderElect,
  };
}

const CONTROLLER_MANAGER = '@skiff/controller-manager';
/**
 * The lease of the controllers that run in the API server's process (the namespace controller, the host-path binder,
 * the bootstrap signer): one API server of several runs them.
 */
export const API_SERVER_CONTROLLERS_LEASE = 'skiff-apiserver-controllers';

/** Options by plugin name: `defaults` under the preset's and config's, `overrides` over them. */
export interface ExtraOptions {
  defaults?: Record<string, Record<string, unknown>>;
  overrides?: Record<string, Record<string, unknown>>;
}

/**
 * Controllers that read the cluster CA from the API server's process when it runs beside them take it from the data
 * dir's pki/ apart (as kube-controller-manager's --root-ca-file and --cluster-signing-cert-file/-key-file).
 */
function clusterCaDefaults(dataDir: string): Record<string, Record<string, unknown>> {
  const caFile = join(dataDir, 'pki', 'ca.crt');
  const caKeyFile = join(dataDir, 'pki', 'ca.key');
  if (!existsSync(caFile)) return {};
  return {
    '@skiff/plugin-controller-root-ca-publisher': { caFile },
    ...(existsSync(caKeyFile) ? { '@skiff/plugin-controller-csr': { caFile, caKeyFile } } : {}),
  };
}

/** Where a cluster's config comes from, as `skiff up` and the component commands read it. */
export interface ClusterBoot {
  cwd: string;
  configFile?: string;
  overrides: SkiffConfig;
  /** Where the logs go (default: stderr, JSON lines). */
  logs?: LogChoice;
}

/** How an API server worker thread builds this cluster's request path: core/cli's api-worker module, with `boot`. */
export function apiWorkerEntry(boot: ClusterBoot): { module: string; data: ClusterBoot } {
  return { module: new URL('./api-worker.js', import.meta.url).href, data: boot };
}

/**
 * A kernel of the config's plugins (preset and config file, as `skiff up` loads them) that run in one of `components`
 * (see pluginComponents), each with its options from the preset and config and `extraOptions(config)`.
 */
export async function createComponentKernel(
  components: readonly Component[],
  boot: ClusterBoot,
  extraOptions: (config: ResolvedConfig) => ExtraOptions = () => ({}),
  thread?: ThreadOptions,
): Promise<{ kernel: Kernel; kept: number; total: number }> {
  // Every plugin's apply only registers taps: a kernel that is never started shows which hooks each one taps.
  const whole = await createCluster(boot);
  const where = pluginComponents(whole);
  const logger = boot.logs ? targetLogger(whole.config.logLevel, logTarget(boot.logs, whole.config.dataDir)).logger : undefined;
  const kernel = new Kernel({ config: whole.config, thread, workerEntry: apiWorkerEntry(boot), logger });
  const { defaults = {}, overrides = {} } = extraOptions(whole.config);
  const plugins = whole.listPlugins();
  const keep = new Set(
    plugins.filter(({ plugin }) => components.some((component) => runsIn(where.get(plugin.name)!, component))).map(({ plugin }) => plugin.name),
  );
  // Plugins that run with the API server (they need what only its process has) but also register controllers: the
  // controller manager runs beside them there, for those controllers only, and under a lease of its own so that one
  // API server of several runs them.
  const hostsControllers =
    !thread &&
    !components.includes('controller-manager') &&
    whole.hooks.controllers.taps.some((tap) => [...keep].some((name) => tap.name === name || tap.name.startsWith(`${name}/`)));
  const extra: Record<string, Record<string, unknown>> = {};
  if (hostsControllers && plugins.some(({ plugin }) => plugin.name === CONTROLLER_MANAGER)) {
    keep.add(CONTROLLER_MANAGER);
    extra[CONTROLLER_MANAGER] = { leaderElection: { leaderElect: true, resourceName: API_SERVER_CONTROLLERS_LEASE } };
  }
  let kept = 0;
  for (const { plugin, options } of plugins) {
    if (!keep.has(plugin.name)) continue;
    const own = options as Record<string, unknown>;
    const merged: Record<string, unknown> = { ...{}, ...defaults[plugin.name], ...own, ...overrides[plugin.name] };
    if (extra[plugin.name]) merged.leaderElection = { ...{}, ...(own.leaderElection as object), ...extra[plugin.name]!.leaderElection! };
    kernel.use(plugin, merged);
    kept += 1;
  }
  return { kernel, kept, total: plugins.length };
}

/**
 * `skiff apiserver`: the store, the API server and the plugins of the request path from the preset, plus the preset's
 * kubelets when `--nodes` asks for some. Writes admin.kubeconfig and the controller manager's and scheduler's kubeconfigs.
 */
export async function apiserver(argv: string[], output: Output, cwd = process.cwd()): Promise<Kernel> {
  const started = performance.now();
  const { configFile, overrides, logFormat } = parseUpArgs(argv);
  const nodes = overrides.nodes ?? 0;
  process.umask(SERVER_UMASK);
  const { kernel, kept, total } = await createComponentKernel(nodes > 0 ? ['apiserver', 'kubelet'] : ['apiserver'], {
    cwd,
    configFile,
    overrides: { ...{}, ...overrides, nodes },
    logs: logFormat ? { toFile: false, format: logFormat } : undefined,
  });
  output.out(`skiff: API server${nodes > 0 ? ' and kubelets' : ''} with ${kept} of the ${total} plugins of preset ${kernel.config.preset}`);
  return startApiServer(kernel, output, cwd, started);
}

async function startApiServer(kernel: Kernel, output: Output, cwd: string, started: number): Promise<Kernel> {
  const { config } = kernel;
  const previousMode = ensurePrivateDataDir(config.dataDir);
  if (previousMode !== undefined) output.err(`skiff: data dir ${config.dataDir} was mode 0${previousMode.toString(8)}; made it 0700 (owner only)`);
  output.out(`skiff: starting the API server (preset ${config.preset}, data dir ${relative(cwd, config.dataDir) || '.'})`);
  await kernel.start();
  const { url } = kernel.resolve('apiServerInfo');
  const files = await writeComponentKubeconfigs(config.dataDir, url);
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  output.out(`kubeconfig: ${join(config.dataDir, 'admin.kubeconfig')}`);
  output.out(`components: ${files.join(', ')}`);
  output.out(`ready: API server ${url}${config.nodes ? ` with ${config.nodes} node${config.nodes === 1 ? '' : 's'}` : ''} in ${seconds}s (Ctrl-C stops)`);
  return kernel;
}

/**
 * `skiff controller-manager` / `skiff scheduler`: the component and its plugins from the preset, talking to the API
 * servers over HTTPS with `<data dir>/<component>.kubeconfig`, with leader election unless `--leader-elect=false`.
 */
export async function separateComponent(component: SeparateComponent, argv: string[], output: Output, cwd = process.cwd()): Promise<Kernel> {
  const started = performance.now();
  const args = parseComponentArgs(argv);
  process.umask(SERVER_UMASK);
  const boot = { cwd, configFile: args.configFile, overrides: { ...{}, ...args.overrides, nodes: 0 } };
  const plugin = COMPONENT_PLUGINS[component];
  let kubeconfig = '';
  const { kernel, kept, total } = await createComponentKernel([component], boot, (config) => {
    kubeconfig = args.kubeconfig ? resolve(cwd, args.kubeconfig) : componentKubeconfigFile(config.dataDir, component);
    return {
      defaults: clusterCaDefaults(config.dataDir),
      overrides: { [plugin]: { kubeconfig, ...(args.servers ? { servers: args.servers } : {}), leaderElection: { leaderElect: args.leaderElect } } },
    };
  });
  if (!existsSync(kubeconfig))
    throw new Error(`${kubeconfig} does not exist: skiff apiserver writes it into its data dir; use that data dir (or a copy) or --kubeconfig`);
  if (!kernel.has(plugin)) throw new Error(`preset ${kernel.config.preset} has no ${plugin}: there is no ${component} to run`);
  output.out(
    `skiff: starting the ${component} with ${kept} of the ${total} plugins of preset ${kernel.config.preset} (${args.servers?.join(', ') ?? 'the kubeconfig server'}; leader election ${args.leaderElect ? 'on' : 'off'})`,
  );
  await kernel.start();
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  output.out(`ready: ${component} in ${seconds}s (Ctrl-C stops)`);
  return kernel;
}
