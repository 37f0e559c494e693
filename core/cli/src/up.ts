import { join, relative } from 'node:path';
import { createCluster, type Kernel } from '@skiff/kernel';
import { parseUpArgs } from './args.js';
import { ensurePrivateDataDir, SERVER_UMASK } from './data-dir.js';
import { apiWorkerEntry } from './components.js';
import { logTarget, observedLogger, targetLogger, type LogChoice, type ObservedRecord } from './logs.js';
import { StartProgress, watchStart, type Terminal } from './progress.js';
import { tapCounts, writeUpRecord } from './up-record.js';
import { CLI_VERSION } from './version.js';

export interface Output {
  out(line: string): void;
  err(line: string): void;
  /** Set when stdout is an interactive terminal (a TTY, and not CI): `skiff up` draws its spinner there. */
  terminal?: Terminal;
}

/**
 * `skiff up`: boots the cluster, prints its start step by step, the kubeconfig path and a ready line, stops on
 * SIGINT/SIGTERM. The components' logs go to <data dir>/logs/skiff.log unless `--log-level` or `--log-format` asks for
 * them on stderr. Everything the cluster writes (store, keys, tokens, kubeconfig, node state, logs) is owner-only: the
 * process umask is 0077 and the data dir is 0700.
 */
export async function up(argv: string[], output: Output, cwd = process.cwd()): Promise<Kernel> {
  const started = performance.now();
  const { configFile, overrides, logFormat } = parseUpArgs(argv);
  const logs: LogChoice = { toFile: overrides.logLevel === undefined && logFormat === undefined, format: logFormat };
  process.umask(SERVER_UMASK);
  const observer: { onRecord?: (record: ObservedRecord) => void } = {};
  let previousMode: number | undefined;
  let logFile: string | undefined;
  const kernel = await createCluster({
    cwd,
    configFile,
    overrides,
    workerEntry: apiWorkerEntry({ cwd, configFile, overrides, logs }),
    logger: (config) => {
      // The data dir is made private before the log file is created in it.
      previousMode = ensurePrivateDataDir(config.dataDir);
      const target = logTarget(logs, config.dataDir);
      logFile = target.to === 'file' ? target.file : undefined;
      return observedLogger(targetLogger(config.logLevel, target).logger, observer);
    },
  });
  const { config } = kernel;
  const dataDir = relative(cwd, config.dataDir) || '.';
  if (previousMode !== undefined) output.err(`skiff: data dir ${dataDir} was mode 0${previousMode.toString(8)}; made it 0700 (owner only)`);
  output.out(`skiff: starting cluster (preset ${config.preset}, data dir ${dataDir})`);
  if (logFile) output.out(`skiff: logs in ${relative(cwd, logFile)} (--log-format text shows them here instead)`);

  const apiServerUrl = (): string | undefined => (kernel.hasComponent('apiServerInfo') ? kernel.resolve('apiServerInfo').url : undefined);
  // A spinner only where nothing else writes to the terminal: with the logs in their file.
  const progress = new StartProgress({ out: (line) => output.out(line), terminal: logFile ? output.terminal : undefined });
  const loaded = kernel.listPlugins().length;
  progress.step(`${loaded} plugin${loaded === 1 ? '' : 's'} loaded`, performance.now() - started);
  const watch = watchStart(kernel, progress, apiServerUrl);
  observer.onRecord = watch.onRecord;
  try {
    await kernel.start();
  } finally {
    observer.onRecord = undefined;
    watch.stop();
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const server = apiServerUrl() ?? '';
  writeUpRecord(config.dataDir, {
    skiff: CLI_VERSION,
    preset: config.preset,
    configFile: config.configFile,
    server: server || undefined,
    logFile,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    plugins: kernel.listPlugins().length,
    taps: tapCounts(kernel),
  });
  const kubeconfig = join(config.dataDir, 'admin.kubeconfig');
  if (server) output.out(`kubeconfig: ${kubeconfig}`);
  output.out(`ready: ${server || 'cluster'} with ${config.nodes} node${config.nodes === 1 ? '' : 's'} in ${seconds}s (Ctrl-C stops)`);
  if (server) output.out(`try: kubectl --kubeconfig ${kubeconfig} get nodes`);
  return kernel;
}

/**
 * Stops the kernel on the first SIGINT/SIGTERM; a second signal exits at once, leaving what was not stopped yet
 * to the next start (which takes over or removes it).
 */
export function stopOnSignals(kernel: Kernel, output: Output, exit: (code: number) => void): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      output.err(`skiff: ${signal} again, exiting now (the next start cleans up what is left)`);
      exit(130);
      return;
    }
    stopping = true;
    output.out('skiff: stopping…');
    kernel.stop().then(
      () => {
        output.out('skiff: stopped');
        exit(0);
      },
      (err: Error) => {
        output.err(`skiff: stop failed: ${err.message}`);
        exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
