import { setMaxListeners } from 'node:events';
import type { KubeObject, ResourceType } from '@skiff/api';
import type { ApiClient, Informer, InformerFactory, Logger } from '@skiff/kernel';
import { SharedInformer, type InformerScope, type InformerSettings } from './informer.js';
import { silentLogger } from './silent-logger.js';

export interface SharedInformerFactoryOptions {
  /** Resync period of every informer (see SharedInformer); default 10 minutes, 0 turns it off. */
  resyncMs?: number;
  logger?: Logger;
  /** Backoff between failed lists and watches; default 500 ms doubling up to 30 s. */
  retry?: { initialMs?: number; maxMs?: number };
}

/**
 * Hands out one informer per (resource type, scope), so every controller asking for pods shares one
 * list/watch and one cache. Informers asked for after `start` start at once.
 */
export class SharedInformerFactory implements InformerFactory {
  private readonly informers = new Map<string, SharedInformer>();
  private readonly runs: Promise<void>[] = [];
  private readonly settings: InformerSettings;
  private signal?: AbortSignal;

  constructor(
    private readonly client: ApiClient,
    options: SharedInformerFactoryOptions = {},
  ) {
    this.settings = {
      resyncMs: options.resyncMs ?? 10 * 60_000,
      logger: options.logger ?? silentLogger,
      retry: { initialMs: options.retry?.initialMs ?? 500, maxMs: options.retry?.maxMs ?? 30_000 },
    };
  }

  informer<T extends KubeObject = KubeObject>(type: ResourceType, scope: InformerScope = {}): Informer<T> {
    const key = [type.group, type.version, type.resource, scope.namespace ?? '', scope.fieldSelector ?? '', scope.labelSelector ?? ''].join('|');
    let informer = this.informers.get(key);
    if (!informer) {
      informer = new SharedInformer(this.client, type, scope, this.settings);
      this.informers.set(key, informer);
      if (this.signal) this.runs.push(informer.run(this.signal));
    }
    return informer as unknown as Informer<T>;
  }

  /** Starts every informer made so far, and every one made later, until `signal` aborts. Repeat calls are ignored. */
  start(signal: AbortSignal): void {
    if (this.signal) return;
    // Every informer's watch listens for the stop: one signal of the factory's own carries them all, so the caller's
    // gets one listener however many informers there are (an AbortSignal warns past ten).
    const own = new AbortController();
    setMaxListeners(0, own.signal);
    if (signal.aborted) own.abort(signal.reason);
    else signal.addEventListener('abort', () => own.abort(signal.reason), { once: true });
    this.signal = own.signal;
    for (const informer of this.informers.values()) this.runs.push(informer.run(own.signal));
  }

  /** Resolves when every informer made so far has synced; rejects if `signal` aborts first. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    const synced = Promise.all([...this.informers.values()].map((informer) => informer.waitForSync()));
    if (!signal) return void (await synced);
    // One abort listener for the lot: a factory may hold more informers than an AbortSignal's listener warning allows.
    if (signal.aborted) throw signal.reason;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([synced, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }

  /** Resolves once the informers have stopped after the start signal aborted (for orderly shutdown). */
  async stopped(): Promise<void> {
    await Promise.all(this.runs);
  }
}
