import { setTimeout as delay } from 'node:timers/promises';
import type { KubeObject, PriorityClass } from '@skiff/api';
import type { Logger } from '@skiff/kernel';
import type { Store } from '@skiff/store';
import { PRIORITY_CLASSES_PREFIX } from './names.js';

const RELIST_DELAY_MS = 1000;

/**
 * The cluster's PriorityClasses, read from the store and kept current by a watch: a pod create looks its class up
 * here without a read, and finds the global default without a list.
 */
export class PriorityClasses {
  private readonly byName = new Map<string, PriorityClass>();
  private readonly defaults = new Map<string, PriorityClass>();

  get(name: string): PriorityClass | undefined {
    return this.byName.get(name);
  }

  /**
   * The class pods get when they name none. Should two be marked (written before this plugin ran), the lowest
   * value wins, as upstream picks it.
   */
  globalDefault(): PriorityClass | undefined {
    let chosen: PriorityClass | undefined;
    for (const candidate of this.defaults.values()) if (!chosen || (candidate.value ?? 0) < (chosen.value ?? 0)) chosen = candidate;
    return chosen;
  }

  /** Applies one stored object (undefined: deleted) under its store key. */
  apply(key: string, object: KubeObject | undefined): void {
    const name = key.slice(PRIORITY_CLASSES_PREFIX.length);
    const priorityClass = object as PriorityClass | undefined;
    if (priorityClass) this.byName.set(name, priorityClass);
    else this.byName.delete(name);
    if (priorityClass?.globalDefault) this.defaults.set(name, priorityClass);
    else this.defaults.delete(name);
  }

  /** Loads every class, then follows the store until `signal` aborts (listing again if the watch falls behind). */
  async follow(store: Store, signal: AbortSignal, logger: Logger): Promise<void> {
    let revision = await this.load(store);
    void (async () => {
      while (!signal.aborted) {
        try {
          for await (const event of store.watch(PRIORITY_CLASSES_PREFIX, revision, signal)) {
            this.apply(event.key, event.type === 'DELETED' ? undefined : event.object);
            revision = event.revision;
          }
        } catch (err) {
          if (signal.aborted || (err as { kind?: string }).kind === 'Closed') return;
          logger.warn({ err }, 'PriorityClass watch ended; listing again');
          await delay(RELIST_DELAY_MS, undefined, { signal }).catch(() => undefined);
          revision = await this.load(store).catch(() => revision);
        }
      }
    })();
  }

  private async load(store: Store): Promise<number> {
    const { items, revision } = await store.list(PRIORITY_CLASSES_PREFIX);
    const present = new Set(items.map((item) => item.key));
    for (const name of [...this.byName.keys()]) if (!present.has(PRIORITY_CLASSES_PREFIX + name)) this.apply(PRIORITY_CLASSES_PREFIX + name, undefined);
    for (const item of items) this.apply(item.key, item.object);
    return revision;
  }
}
