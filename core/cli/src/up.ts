import { join, relative } from 'node:path';
import { createCluster, type Kernel } from '@skiff/kernel';
import { parseUpArgs } from './args.js';
import { ensurePrivateDataDir, SERVER_UMASK } from './data-dir.js';
import { apiWorkerEntry } from './components.js';

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

/**
 * `skiff up`: boots the cluster, prints the kubeconfig path and a ready line, stops on SIGINT/SIGTERM.
 * Everything the cluster writes (store, keys, tokens, kubeconfig, node state) is owner-only: the process
 * umask is 0077 and the data dir is 0700.
 */
export async function up(argv: string[], output: Output, cwd = process.cwd()): Promise<Kernel> {
  const started = performance.now();
  const { configFile, overrides } = parseUpArgs(argv);
  process.umask(SERVER_UMASK);
  const kernel = await createCluster({ cwd, configFile, overrides, workerEntry: apiWorkerEntry({ cwd, configFile, overrides }) });
  const { config } = kernel;
  const dataDir = relative(cwd, config.dataDir) || '.';
  const previousMode = ensurePrivateDataDir(config.dataDir);
  if (previousMode !== undefined) output.err(`skiff: data dir ${dataDir} was mode 0${previousMode.toString(8)}; made it 0700 (owner only)`);
  output.out(`skiff: starting cluster (preset ${config.preset}, data dir ${dataDir})`);
  await kernel.start();

  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  let server = '';
  try {
    server = kernel.resolve('apiServerInfo').url;
  } catch {
    server = '';
  }
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
