// The scheduler's worker thread: loads the scheduler plugins again (by module file), builds the same
// profiles and runs the same Scheduler, with a client whose requests cross a MessagePort to the API
// server of the parent thread, or an HTTPS client of its own when the scheduler talks to a remote API server.
// Started by SchedulerThread (thread.ts); each connect … stop is one term (leader election may start several).
import { pathToFileURL } from 'node:url';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { errorMessage } from '@skiff/api';
import { createClient, createClientFromKubeconfig, PortTransport, type SharedInformerFactory, type SkiffClient } from '@skiff/client';
import { answerCalls, createMetricsRegistry, Kernel, type ResolvedConfig } from '@skiff/kernel';
import { buildProfiles, type ProfileConfig } from './framework/profile.js';
import { collectSchedulerPlugins } from './plugin.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import type { SchedulerWorkerData } from './thread.js';

const data = workerData as SchedulerWorkerData;

/** Through a port to the parent's API server, or over HTTPS to a kubeconfig's (a file path the parent resolved). */
interface ConnectMessage {
  type: 'connect';
  port?: MessagePort;
  kubeconfig?: string;
  servers?: string[];
}
const port = parentPort!;

/** Loads the plugins and builds the profiles (reported as 'loaded'), then waits for the port to the API server. */
async function main(): Promise<void> {
  const kernel = new Kernel({ config: data.config as Partial<ResolvedConfig> as ResolvedConfig });
  for (const source of data.plugins) {
    const module = (await import(pathToFileURL(source.file).href)) as { default: Parameters<Kernel['use']>[0] };
    kernel.use(module.default, source.options);
  }
  const options = data.schedulerOptions as { schedulerName: string; percentageOfNodesToScore?: number; profiles?: ProfileConfig[] };
  const configs: ProfileConfig[] = options.profiles?.length ? options.profiles : [{ schedulerName: options.schedulerName }];
  const profiles = buildProfiles(collectSchedulerPlugins(kernel), configs, { percentageOfNodesToScore: options.percentageOfNodesToScore });
  const logger = kernel.logger.child({ component: 'scheduler', thread: 'worker' });
  // Its own registry, read by the parent's at every scrape; the series outlive terms, as the parent's would.
  const metrics = createMetricsRegistry({ defaultMetrics: false });
  if (data.metrics)
    answerCalls(
      data.metrics,
      () => metrics.getMetricsAsJSON(),
      (err) => errorMessage(err),
    );
  // One term of scheduling per connect (the parent disconnects when it loses the lease and connects when it leads again).
  let term: { abort: AbortController; scheduler: Scheduler; informers: SharedInformerFactory; client: SkiffClient } | undefined;
  port.on('message', (message: ConnectMessage | { type: 'stop' }) => {
    if (message.type === 'connect') {
      const client = message.port
        ? createClient(new PortTransport(message.port))
        : createClientFromKubeconfig(message.kubeconfig!, undefined, { servers: message.servers });
      const current = { abort: new AbortController(), client, ...createScheduler(client, profiles, logger, metrics) };
      term = current;
      current.scheduler
        .start(current.abort.signal)
        .then(() => port.postMessage({ type: 'ready' }))
        .catch((err: unknown) => port.postMessage({ type: 'error', message: errorMessage(err) }));
    } else if (message.type === 'stop') {
      const ending = term;
      term = undefined;
      ending?.abort.abort();
      void Promise.resolve(ending?.scheduler.stop())
        .then(() => ending?.informers.stopped())
        .then(() => ending?.client.close())
        .finally(() => port.postMessage({ type: 'stopped' }));
    }
  });
  port.postMessage({ type: 'loaded' });
}

main().catch((err: unknown) => port.postMessage({ type: 'error', message: errorMessage(err) }));
