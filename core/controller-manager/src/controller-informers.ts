import type { KubeObject } from '@skiff/api';
import { objectKey } from '@skiff/client';
import type { Informer, InformerFactory, InformerHandlers, Logger } from '@skiff/kernel';

function guarded<T extends KubeObject>(handlers: InformerHandlers<T>, logger: Logger): InformerHandlers<T> {
  const failed = (kind: keyof InformerHandlers<T>, object: T, err: unknown) =>
    logger.error({ err, handler: kind, key: objectKey(object) }, 'informer handler failed');
  const wrapped: InformerHandlers<T> = {};
  const { add, update, delete: remove } = handlers;
  if (add)
    wrapped.add = (object) => {
      try {
        add(object);
      } catch (err) {
        failed('add', object, err);
      }
    };
  if (update)
    wrapped.update = (old, object) => {
      try {
        update(old, object);
      } catch (err) {
        failed('update', object, err);
      }
    };
  if (remove)
    wrapped.delete = (object) => {
      try {
        remove(object);
      } catch (err) {
        failed('delete', object, err);
      }
    };
  return wrapped;
}

/**
 * The shared informers as one controller sees them: the same caches, but a handler of this controller that
 * throws is logged through the controller's logger, which names the controller and the plugin that
 * registered it (the shared informer could only say that some handler failed).
 */
export function informersFor(shared: InformerFactory, logger: Logger): InformerFactory {
  return {
    informer<T extends KubeObject = KubeObject>(
      type: Parameters<InformerFactory['informer']>[0],
      options?: Parameters<InformerFactory['informer']>[1],
    ): Informer<T> {
      const informer = shared.informer<T>(type, options);
      return {
        type: informer.type,
        addHandlers: (handlers) => informer.addHandlers(guarded(handlers, logger)),
        get: (key) => informer.get(key),
        list: (namespace) => informer.list(namespace),
        byIndex: (index, value) => informer.byIndex(index, value),
        addIndex: (index, indexer) => informer.addIndex(index, indexer),
        hasSynced: () => informer.hasSynced(),
        waitForSync: (signal) => informer.waitForSync(signal),
      };
    },
    start: (signal) => shared.start(signal),
    waitForSync: (signal) => shared.waitForSync(signal),
  };
}
