// The scheduler's worker thread: loads the scheduler plugins again (by module file), builds the same
// profiles and runs the same Scheduler, with a client whose requests cross a MessagePort to the API
// server of the parent thread. Started by SchedulerThread (thread.ts).
import { pathToFileURL } from 'node:url';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { errorMessage } from '@skiff/api';
import { createClient, EventRecorderImpl, PortTransport, SharedInformerFactory } from '@skiff/client';
import { Kernel, type ResolvedConfig } from '@skiff/kernel';
import { buildProfiles, type ProfileConfig } from './framework/profile.js';
import { SCHEDULER_COMPONENT } from './names.js';
import { collectSchedulerPlugins } from './plugin.js';
import { Scheduler } from './scheduler.js';
import type { SchedulerWorkerData } from './thread.js';

const data = workerData as SchedulerWorkerData & { port: MessagePort };
const port = parentPort!;

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
  const client = createClient(new PortTransport(data.port));
  const informers = new SharedInformerFactory(client, { logger });
  const scheduler = new Scheduler({
    profiles,
    client,
    informers,
    recorder: new EventRecorderImpl(client, { component: SCHEDULER_COMPONENT, logger }),
    logger,
  });
  const abort = new AbortController();
  port.on('message', (message: { type: string }) => {
    if (message.type !== 'stop') return;
    abort.abort();
    void scheduler
      .stop()
      .then(() => informers.stopped())
      .finally(() => port.postMessage({ type: 'stopped' }));
  });
  await scheduler.start(abort.signal);
  port.postMessage({ type: 'ready' });
}

main().catch((err: unknown) => port.postMessage({ type: 'error', message: errorMessage(err) }));
