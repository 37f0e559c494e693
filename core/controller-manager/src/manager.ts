import { EventRecorderImpl, SharedInformerFactory } from '@skiff/client';
import type { ApiClient, ControllerContext, ControllerDefinition, EventRecorder, InformerFactory, Logger } from '@skiff/kernel';
import { checkEnabledNames, isControllerEnabled } from './enabled.js';
import { ControllerManagerError } from './errors.js';

export interface ControllerManagerOptions {
  /** How often informers replay their cache to handlers, so missed work is retried. */
  resyncMs: number;
  /** Workers per controller, unless a controller's own options say otherwise. */
  workers: number;
  /** `*` for every registered controller, `name` to run one, `-name` to leave one out. */
  enabled: readonly string[];
}

export const CONTROLLER_MANAGER_DEFAULTS: ControllerManagerOptions = Object.freeze({ resyncMs: 30_000, workers: 2, enabled: ['*'] });

export interface ControllerManagerDeps {
  client: ApiClient;
  logger: Logger;
  /** Defaults to a SharedInformerFactory over `client`. */
  informers?: InformerFactory;
  /** One recorder for every controller; by default each controller gets its own, as component `<name>-controller`. */
  recorder?: EventRecorder;
}

/**
 * Runs control loops, like kube-controller-manager: every enabled controller gets the same client,
 * shared informers and an event recorder named after it; the informers start once every controller has asked for the ones
 * it needs, so each cache is listed and watched once.
 */
export class ControllerManager {
  readonly informers: InformerFactory;
  private readonly options: ControllerManagerOptions;
  private readonly abort = new AbortController();
  private readonly work: Promise<unknown>[] = [];
  private started: string[] = [];

  constructor(
    private readonly deps: ControllerManagerDeps,
    options: Partial<ControllerManagerOptions> = {},
  ) {
    this.options = { ...CONTROLLER_MANAGER_DEFAULTS, ...options };
    this.informers = deps.informers ?? new SharedInformerFactory(deps.client, { resyncMs: this.options.resyncMs, logger: deps.logger });
  }

  /** Names of the controllers that were started. */
  get running(): readonly string[] {
    return this.started;
  }

  async start(controllers: readonly ControllerDefinition[]): Promise<void> {
    checkEnabledNames(this.options.enabled, controllers.map((c) => c.name));
    for (const controller of controllers) {
      if (!isControllerEnabled(controller.name, this.options.enabled)) {
        this.deps.logger.info({ controller: controller.name }, 'controller disabled');
        continue;
      }
      try {
        await controller.start(this.contextFor(controller.name));
      } catch (err) {
        this.abort.abort();
        throw new ControllerManagerError('SKIFF_ERR_CONTROLLER_START', { name: controller.name, detail: (err as Error).message }, { cause: err });
      }
      this.started.push(controller.name);
      this.deps.logger.info({ controller: controller.name }, 'controller started');
    }
    this.informers.start(this.abort.signal);
  }

  /** Stops every controller and waits for their workers to finish the item in hand. */
  async stop(): Promise<void> {
    this.abort.abort();
    const results = await Promise.allSettled(this.work);
    for (const result of results) {
      if (result.status === 'rejected') this.deps.logger.error({ err: result.reason }, 'controller work ended with an error');
    }
    this.started = [];
  }

  private contextFor(name: string): ControllerContext {
    return {
      client: this.deps.client,
      informers: this.informers,
      // Kubernetes names event sources after the controller (deployment-controller, replicaset-controller…).
      recorder: this.deps.recorder ?? new EventRecorderImpl(this.deps.client, { component: `${name}-controller`, logger: this.deps.logger }),
      logger: this.deps.logger.child({ controller: name }),
      signal: this.abort.signal,
      workers: this.options.workers,
      track: (work) => {
        this.work.push(work);
      },
    };
  }
}
