/** The scheduling framework's extension points, as kube-scheduler names them in messages. */
export type ExtensionPoint =
  | 'Init'
  | 'QueueSort'
  | 'PreEnqueue'
  | 'PreFilter'
  | 'Filter'
  | 'PostFilter'
  | 'PreScore'
  | 'Score'
  | 'NormalizeScore'
  | 'Reserve'
  | 'Unreserve'
  | 'Permit'
  | 'PreBind'
  | 'Bind'
  | 'PostBind';

/**
 * What a plugin's failure at an extension point says on the pod (PodScheduled condition, FailedScheduling
 * event): kube-scheduler's own wording (pkg/scheduler/framework/runtime), so a message reads the same as there.
 */
export function failureMessage(point: ExtensionPoint, plugin: string, detail: string): string {
  switch (point) {
    case 'Filter':
      return `running "${plugin}" filter plugin: ${detail}`;
    case 'Score':
      return `running Score plugins: plugin "${plugin}" failed with: ${detail}`;
    case 'NormalizeScore':
      return `running Normalize on Score plugins: plugin "${plugin}" failed with: ${detail}`;
    default:
      return `running ${point} plugin "${plugin}": ${detail}`;
  }
}

/**
 * A scheduler plugin threw (or rejected) at an extension point. It is an error of the scheduler's, not a
 * misfit: the pod gets reason SchedulerError and goes back to the queue with backoff.
 */
export class PluginThrew extends Error {
  constructor(
    readonly plugin: string,
    readonly extensionPoint: ExtensionPoint,
    cause: unknown,
  ) {
    super(failureMessage(extensionPoint, plugin, cause instanceof Error ? cause.message : String(cause)), { cause });
    this.name = 'PluginThrew';
  }
}

/** Runs one plugin method; a throw or a rejection becomes a PluginThrew naming the plugin and the point. */
export async function callPlugin<T>(point: ExtensionPoint, plugin: string, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new PluginThrew(plugin, point, err);
  }
}

/** The same for a synchronous method outside the hot loops (the loops over nodes keep one try around them). */
export function callPluginSync<T>(point: ExtensionPoint, plugin: string, call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw new PluginThrew(plugin, point, err);
  }
}
