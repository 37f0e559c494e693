/**
 * The entry of an API server worker thread: builds the request path's kernel with the factory the primary named
 * (Kernel.workerEntry), starts it on the primary's listening socket, and stops it when told. Messages to the primary:
 * { type: 'ready' }, { type: 'failed', message }, { type: 'stopped' }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import type { Kernel, ThreadOptions, WorkerEntry, WorkerKernelFactory } from '@skiff/kernel';

interface WorkerStart {
  entry: WorkerEntry;
  thread: ThreadOptions;
}

const port = parentPort!;
const { entry, thread } = workerData as WorkerStart;

function moduleUrl(module: string): string {
  return module.startsWith('file:') ? module : pathToFileURL(module).href;
}

let kernel: Kernel | undefined;
try {
  const factory = ((await import(moduleUrl(entry.module))) as { default: WorkerKernelFactory }).default;
  kernel = await factory(entry.data, { thread });
  await kernel.start();
  port.postMessage({ type: 'ready' });
} catch (err) {
  port.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
  await kernel?.stop().catch(() => undefined);
  port.close();
}

port.on('message', (message: { type?: string }) => {
  if (message.type !== 'stop') return;
  void (kernel?.stop() ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => {
      port.postMessage({ type: 'stopped' });
      port.close();
    });
});
