import type { ApiClient, EventRecorder, InformerFactory } from './client.js';
import type { Logger } from './logger.js';
import type { Registry } from '../metrics.js';

export interface ControllerContext {
  client: ApiClient;
  informers: InformerFactory;
  recorder: EventRecorder;
  logger: Logger;
  /** Aborted when the controller manager stops. */
  signal: AbortSignal;
  /** How many workers each controller runs unless its own options say otherwise (the manager's `workers` option). */
  workers?: number;
  /** Where the controller's work queues report their workqueue_* metrics (the kernel's `metrics` registry). */
  metrics?: Registry;
  /** Hands the manager a controller's long-running work (its workers), so stopping waits for it to finish. */
  track?(work: Promise<unknown>): void;
}

/** A control loop. `start` sets up informers and workers and returns; work stops when `ctx.signal` aborts. */
export interface ControllerDefinition {
  name: string;
  start(ctx: ControllerContext): void | Promise<void>;
}

export interface ControllerRegistry {
  register(controller: ControllerDefinition): void;
  list(): ControllerDefinition[];
}
