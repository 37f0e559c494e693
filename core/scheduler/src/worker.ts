// The scheduler's worker thread: loads the scheduler plugins again (by module file), builds the same
// profiles and runs the same Scheduler, with a client whose requests cross a MessagePort to the API
// server of the parent thread. Started by SchedulerThread (thread.ts).
import { pathToFileURL } from 'node:url';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { errorMessage } from '@skiff/api';
import { createClient, PortTransport, type SharedInformerFactory } from '@skiff/client';
import { Kernel, type ResolvedConfig } from '@skiff/kernel';
import { buildProfiles, type ProfileConfig } from './framework/profile.js';
import { collectSchedulerPlugins } from './plugin.js';
import { createScheduler, type Scheduler } from './scheduler.js';
import type { SchedulerWorkerData } from './thread.js';

const data = workerData as SchedulerWorkerData;
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
  const abort = new AbortController();
  let scheduler: Scheduler | undefined;
  let informers: SharedInformerFactory | undefined;
  port.on('message', (message: { type: string; port?: MessagePort }) => {
    if (message.type === 'connect' && message.port) {
      const client = createClient(new PortTransport(message.port));
      ({ scheduler, informers } = createScheduler(client, profiles, logger));
      scheduler
        .start(abort.signal)
        .then(() => port.postMessage({ type: 'ready' }))
        .catch((err: unknown) => port.postMessage({ type: 'error', message: errorMessage(err) }));
    } else if (message.type === 'stop') {
      abort.abort();
      void Promise.resolve(scheduler?.stop())
        .then(() => informers?.stopped())
        .finally(() => port.postMessage({ type: 'stopped' }));
    }
  });
  port.postMessage({ type: 'loaded' });
}

main().catch((err: unknown) => port.postMessage({ type: 'error', message: errorMessage(err) }));
