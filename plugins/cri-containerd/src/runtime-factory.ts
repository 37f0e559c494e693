import { join } from 'node:path';
import type { RuntimeFactory } from '@skiff/kernel';
import { CriClient } from './cri-client.js';
import { ContainerdDaemon } from './daemon.js';
import { importImageArchive } from './images.js';
import { NODE_FOLDER, RUNTIME_NAME } from './names.js';
import type { ContainerdRuntimeOptions } from './options.js';
import { buildPauseImage } from './pause-image.js';
import { ContainerdRuntime } from './runtime.js';

/**
 * The factory kubelets pick with `runtime: 'containerd'`: for each node, containerd started with a generated
 * configuration under the node's data dir (or the socket the options name), reached over CRI v1.
 */
export function containerdRuntimeFactory(options: ContainerdRuntimeOptions): RuntimeFactory {
  return {
    name: RUNTIME_NAME,
    async create(node) {
      const logger = node.logger.child({ runtime: RUNTIME_NAME });
      const daemon = options.socket
        ? undefined
        : await ContainerdDaemon.start({
            baseDir: join(node.dataDir, NODE_FOLDER),
            binary: options.containerd,
            sandboxImage: options.sandboxImage,
            plainHttpRegistries: options.plainHttpRegistries,
            logLevel: options.logLevel,
            startTimeoutSeconds: options.startTimeoutSeconds,
            logger,
          });
      const socket = options.socket ?? daemon!.socket;
      // containerd Skiff started is started again when it ends on its own; calls that found it gone wait for that.
      const client = new CriClient(socket, daemon ? { available: () => daemon.available(), reconnectMs: options.startTimeoutSeconds * 1000 } : {});
      const runtime = new ContainerdRuntime(client, logger, async () => daemon?.stop(), daemon !== undefined);
      try {
        await Promise.race([client.waitForReady(options.startTimeoutSeconds * 1000), daemon?.whenFailed()]);
        for (const file of options.imports) logger.info({ file, images: await importImageArchive(socket, file) }, 'image archive imported');
        if (options.buildSandboxImage && !(await runtime.imageStatus(options.sandboxImage))) {
          const file = join(node.dataDir, NODE_FOLDER, 'pause.tar');
          await buildPauseImage(options.sandboxImage, file);
          await importImageArchive(socket, file);
          logger.info({ image: options.sandboxImage }, 'sandbox image built from busybox-static and imported');
        }
      } catch (err) {
        client.close();
        await daemon?.stop();
        throw err;
      }
      return runtime;
    },
  };
}
