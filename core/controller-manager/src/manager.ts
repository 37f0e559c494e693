import { setMaxListeners } from 'node:events';
import { errorMessage } from '@skiff/api';
import { EventRecorderImpl, SharedInformerFactory } from '@skiff/client';
import type { ApiClient, ControllerContext, ControllerDefinition, EventRecorder, InformerFactory, Logger, Registry } from '@skiff/kernel';
import { informersFor } from './controller-informers.js';
import { checkEnabledNames, isControllerEnabled } from './enabled.js';
import { ControllerManagerError } from './errors.js';
import { CONTROLLER_MANAGER_DEFAULTS, type ControllerManagerOptions } from './options.js';

/** What the manager itself uses of the plugin's options (the rest is how the plugin connects and elects). */
export type ControllerManagerSettings = Pick<ControllerManagerOptions, keyof typeof CONTROLLER_MANAGER_DEFAULTS>;

export interface ControllerManagerDeps {
  client: ApiClient;
  logger: Logger;
  /** Defaults to a SharedInformerFactory over `client`. */
  informers?: InformerFactory;
  /** One recorder for every controller; by default each controller gets its own, as component `<name>-controller`. */
  recorder?: EventRecorder;
  /** Where controllers' work queues report their metrics (the kernel's `metrics` component). */
  metrics?: Registry;
}

/**
 * Runs control loops, like kube-controller-manager: every enabled controller gets the same client,
 * shared informers and an event recorder named after it; the informers start once every controller has asked for the ones
 * it needs, so each cache is listed and watched once.
 */
export class ControllerManager {
  readonly informers: InformerFactory;
  private readonly options: ControllerManagerSettings;
  private readonly abort = new AbortController();
  private readonly work: Promise<unknown>[] = [];
  private started: string[] = [];

  constructor(
    private readonly deps: ControllerManagerDeps,
    options: Partial<ControllerManagerSettings> = {},
  ) {
    this.options = { ...{}, ...CONTROLLER_MANAGER_DEFAULTS, ...options };
    // Every controller and informer listens for the manager stopping.
    setMaxListeners(0, this.abort.signal);
    this.informers = deps.informers ?? new SharedInformerFactory(deps.client, { resyncMs: this.options.resyncMs, logger: deps.logger });
  }

  /** Names of the controllers that were started. */
  get running(): readonly string[] {
    return this.started;
  }

  /**
   * Starts the enabled controllers. `pluginOf` says which plugin registered each (the registry knows): every
   * log line of a controller, its failures included, names both.
   */
  async start(controllers: readonly ControllerDefinition[], pluginOf: (controller: string) => string | undefined = () => undefined): Promise<void> {
    checkEnabledNames(
      this.options.enabled,
      controllers.map((c) => c.name),
    );
    for (const controller of controllers) {
      if (!isControllerEnabled(controller.name, this.options.enabled)) {
        this.deps.logger.info({ controller: controller.name }, 'controller disabled');
        continue;
      }
      const plugin = pluginOf(controller.name);
      const ctx = this.contextFor(controller.name, plugin);
      try {
        await controller.start(ctx);
      } catch (err) {
        this.abort.abort();
        ctx.logger.error({ err }, 'controller failed to start');
        const from = plugin ? ` (plugin "${plugin}")` : '';
        throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_START', { name: controller.name, from, detail: errorMessage(err) }, { cause: err });
      }
      this.started.push(controller.name);
      ctx.logger.info({}, 'controller started');
    }
    this.informers.start(this.abort.signal);
  }

  /** Stops every controller and waits for their workers to finish the item in hand. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.work);
    this.started = [];
  }

  private contextFor(name: string, plugin: string | undefined): ControllerContext {
    const logger = this.deps.logger.child({ controller: name, ...(plugin ? { plugin } : {}) });
    return {
      client: this.deps.client,
      informers: informersFor(this.informers, logger),
      // Kubernetes names event sources after the controller (deployment-controller, replicaset-controller…).
      recorder: this.deps.recorder ?? new EventRecorderImpl(this.deps.client, { component: `${name}-controller`, logger: this.deps.logger }),
      logger,
      signal: this.abort.signal,
      workers: this.options.workers,
      ...(this.deps.metrics ? { metrics: this.deps.metrics } : {}),
      // Work that fails is logged when it fails, naming the controller, not only once everything stops.
      track: (work) => {
        this.work.push(work.catch((err: unknown) => logger.error({ err }, 'controller stopped with an error')));
      },
    };
  }
}
