import { definePlugin, type ControllerContext, type Kernel, type OptionsOf, type OptionsSchema, type SkiffPlugin } from '@skiff/kernel';
import { trackWork } from './track.js';

/** A control loop as a controller plugin makes it: `run` works until the context's signal aborts. */
export interface RunnableController {
  run(workers: number): Promise<unknown>;
}

/** Option schemas by name: a controller plugin's options beyond `workers`. */
type OptionProperties = { readonly [name: string]: OptionsSchema };

/** The options schema of a controller plugin: `workers`, then the plugin's own options. */
export type ControllerOptionsSchema<P extends OptionProperties> = {
  type: 'object';
  properties: { workers: { type: 'integer'; minimum: 1; description: string } } & P;
};

/** The options a controller plugin's functions receive: checked, with defaults filled in. */
export type ControllerPluginOptions<P extends OptionProperties> = OptionsOf<ControllerOptionsSchema<P>>;

/** Makes one controller when the controller manager starts it (after the plugin's setup, if it needs any). */
export type ControllerFactory = (ctx: ControllerContext) => RunnableController | Promise<RunnableController>;

export interface ControllerPluginDefinition<P extends OptionProperties> extends Omit<SkiffPlugin, 'options' | 'apply'> {
  /** What the `workers` option counts, for its description: "Deployments synced in parallel". */
  workers: string;
  /** Options beyond `workers`, as schema properties. */
  options?: P;
  /**
   * Called in `apply` with the checked options: the controllers to register, by controller name. Throwing
   * here (an option that fails a check of its own) stops the plugin from loading.
   */
  controllers(options: ControllerPluginOptions<P>, kernel: Kernel): Record<string, ControllerFactory>;
  /** Taps the plugin adds besides its controllers (a scheduler filter, an admission step). */
  apply?(kernel: Kernel, options: ControllerPluginOptions<P>): void;
}

/**
 * A plugin whose work is control loops: it taps `controllers` and registers each controller, which the
 * manager starts with `workers` workers — the plugin's `workers` option, else the manager's, else 2 — and
 * tracks, so stopping waits for it. The result is a `definePlugin` plugin with the `workers` option added to
 * its schema, so `PluginOptions<typeof plugin>` includes it.
 */
export function controllerPlugin<const P extends OptionProperties = Record<never, never>>(
  definition: ControllerPluginDefinition<P>,
): SkiffPlugin<ControllerPluginOptions<P>> & { options: ControllerOptionsSchema<P> } {
  const { workers, options, controllers, apply, ...metadata } = definition;
  const schema = {
    type: 'object',
    properties: { workers: { type: 'integer', minimum: 1, description: `${workers} (default: the controller manager's workers)` }, ...options },
  } as ControllerOptionsSchema<P>;
  return definePlugin({
    ...{},
    ...metadata,
    options: schema as OptionsSchema,
    apply(kernel, checked) {
      const settings = checked as ControllerPluginOptions<P>;
      const { workers: ownWorkers } = checked as { workers?: number };
      const factories = Object.entries(controllers(settings, kernel));
      kernel.hooks.controllers.tap(metadata.name, (registry) => {
        for (const [name, make] of factories) {
          registry.register({
            name,
            async start(ctx) {
              const controller = await make(ctx);
              trackWork(ctx, controller.run(ownWorkers ?? ctx.workers ?? 2));
            },
          });
        }
      });
      apply?.(kernel, settings);
    },
  }) as never;
}
