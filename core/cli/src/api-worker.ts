/**
 * The request path of a cluster, for an API server worker thread (config `apiServer.workers`): the plugins of the
 * config and preset that run with the API server, as `skiff apiserver` keeps them, on the primary's store and socket.
 */
import type { Kernel, ThreadOptions } from '@skiff/kernel';
import { createComponentKernel, type ClusterBoot } from './components.js';

export default async function apiWorkerKernel(boot: unknown, options: { thread: ThreadOptions }): Promise<Kernel> {
  const { kernel } = await createComponentKernel(['apiserver'], boot as ClusterBoot, undefined, options.thread);
  return kernel;
}
