import { KernelError } from './errors.js';
import { traceTap } from './tracing/taps.js';

/** A tap as tapable hands it to a `register` interceptor. */
interface RegisteredTap {
  name: string;
  type: 'sync' | 'async' | 'promise';
  fn: (...args: any[]) => unknown;
  /** The package whose code registered the tap (set by the kernel's interceptor). */
  plugin?: string;
}

/** What this module needs of a tapable hook. */
interface InterceptableHook {
  intercept(interceptor: { name?: string; register?(tap: any): any }): void;
}

/** A hook whose taps are called with `Args` (tapable's hooks say so in `tap`). */
interface HookOf<Args extends unknown[]> extends InterceptableHook {
  tap(options: string, fn: (...args: Args) => unknown): void;
}

/** Who is running: a plugin package, and the tap it runs through (absent while its `apply` runs). */
export interface PluginInCharge {
  pluginName: string;
  tapName?: string;
}

/**
 * An error a plugin's tap threw (or rejected with) that was not a deliberate answer: it names the plugin,
 * its tap and the hook, and keeps the original as `cause`. Callers turn it into what their clients see (a 500
 * naming the admission plugin, a 401 cause naming the authenticator…) and log `cause` with its stack.
 */
export class PluginFailure extends KernelError {
  constructor(
    /** The package that registered the tap; the tap's name when the kernel could not tell. */
    readonly pluginName: string,
    readonly tapName: string,
    readonly hookName: string,
    cause: unknown,
  ) {
    const tap = tapName === pluginName ? '' : ` (tap "${tapName}")`;
    super('SKIFF_ERR_KERNEL_PLUGIN_FAILED', { name: pluginName, hook: hookName, tap, detail: messageOf(cause) }, { cause });
    this.name = 'PluginFailure';
  }

  /** The original error's message, without the plugin prefix. */
  get detail(): string {
    return messageOf(this.cause);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Recognised by shape as well as by class, like the API server's error response does, so a plugin that
 * bundles its own copy of @skiff/kernel is still understood.
 */
export function isPluginFailure(err: unknown): err is PluginFailure {
  return (
    err instanceof PluginFailure ||
    (typeof err === 'object' && err !== null && 'name' in err && err.name === 'PluginFailure' && 'tapName' in err && typeof err.tapName === 'string')
  );
}

/**
 * Errors a tap throws on purpose, as its answer: an admission rejection, an API error, a kernel error (one
 * that already names a plugin included). They pass through unchanged.
 */
function isDeliberate(err: unknown): boolean {
  if (err instanceof KernelError) return true;
  if (typeof err !== 'object' || err === null || !('name' in err)) return false;
  const { name } = err;
  if (name === 'KernelError' || name === 'PluginFailure') return true;
  if (name === 'AdmissionError') return 'status' in err && typeof err.status === 'number';
  if (name === 'ApiError') return 'toStatus' in err && typeof err.toStatus === 'function';
  return false;
}

// Plugin code runs one synchronous stretch at a time, so "who is running now" fits in one variable: set
// around each plugin's apply and each synchronous tap, restored afterwards (taps may call other hooks).
let inCharge: PluginInCharge | undefined;

/**
 * The plugin whose code is running right now: inside its `apply`, or inside one of its synchronous taps (the
 * registration hooks — controllers, schedulerPlugins, runtimes… — are synchronous). A registry calls this in
 * `register()` to remember which plugin registered what, so later failures can name it. Undefined elsewhere.
 */
export function pluginInCharge(): PluginInCharge | undefined {
  return inCharge;
}

function runAs<T>(who: PluginInCharge, run: () => T): T {
  const previous = inCharge;
  inCharge = who;
  try {
    return run();
  } finally {
    inCharge = previous;
  }
}

/**
 * Runs a plugin's `apply`. A throw becomes a KernelError naming the plugin (`plugin "x" failed in apply:
 * boom`), the one line the CLI prints; kernel errors (a nested `use`, say) pass through.
 */
export function applyPlugin<O>(plugin: { name: string; apply(kernel: any, options: O): void }, kernel: unknown, options: O): void {
  try {
    runAs({ pluginName: plugin.name }, () => plugin.apply(kernel, options));
  } catch (err) {
    if (isDeliberate(err)) throw err;
    throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_APPLY', { name: plugin.name, detail: messageOf(err) }, { cause: err });
  }
}

/**
 * Rewraps a tap's function so that whatever it throws, returns a rejected promise with, or passes to its
 * callback goes through `handle` first. `handle` throws the error to pass on, or returns the value the tap
 * should answer instead (a bail chain then goes on to the next tap).
 */
function guardTap<T extends RegisteredTap>(tap: T, handle: (err: unknown, args: unknown[]) => unknown): T {
  const { fn } = tap;
  switch (tap.type) {
    case 'sync':
      return {
        ...{},
        ...tap,
        fn: (...args: unknown[]) => {
          try {
            return fn(...args);
          } catch (err) {
            return handle(err, args);
          }
        },
      };
    case 'promise':
      return {
        ...{},
        ...tap,
        fn: async (...args: unknown[]) => {
          try {
            return await fn(...args);
          } catch (err) {
            return handle(err, args);
          }
        },
      };
    case 'async':
      return {
        ...{},
        ...tap,
        fn: (...args: unknown[]) => {
          const callback = args.pop() as (err?: unknown, result?: unknown) => void;
          let answered = false;
          const answer = (err?: unknown, result?: unknown) => {
            answered = true;
            if (err === undefined || err === null || err === false) return callback(null, result);
            let value: unknown;
            try {
              value = handle(err, args);
            } catch (handled) {
              return callback(handled);
            }
            return callback(null, value);
          };
          try {
            fn(...args, answer);
          } catch (err) {
            // A throw after the callback ran came from whatever the callback ran next, not from this tap.
            if (answered) throw err;
            answer(err);
          }
        },
      };
    default:
      return tap;
  }
}

/**
 * Installs, on every hook of the catalogue, an interceptor that remembers which plugin registered each tap
 * and turns an unexpected error from the tap into a PluginFailure naming it. Synchronous taps also run "in
 * charge" (see pluginInCharge), so registries learn who registered what. The taps of the hooks a request or
 * a pod passes through also record a span when they run inside an open trace (tracing/taps.ts), unless
 * `tracing` is false (the tracing benchmark's baseline). Returns the hooks.
 */
export function namePluginsInErrors<H extends Readonly<Record<string, InterceptableHook>>>(hooks: H, tracing = true): H {
  for (const [hookName, hook] of Object.entries(hooks)) {
    hook.intercept({
      name: 'plugin-errors',
      register(tap: RegisteredTap): RegisteredTap {
        const pluginName = tap.plugin ?? inCharge?.pluginName ?? tap.name;
        const who: PluginInCharge = { pluginName, tapName: tap.name };
        const owned = { ...{}, ...tap, plugin: pluginName };
        if (tracing) owned.fn = traceTap(hookName, pluginName, tap);
        if (tap.type === 'sync') {
          const { fn } = owned;
          owned.fn = (...args: unknown[]) => runAs(who, () => fn(...args));
        }
        return guardTap(owned, (err) => {
          if (isDeliberate(err)) throw err;
          throw new PluginFailure(pluginName, tap.name, hookName, err);
        });
      },
    });
  }
  return hooks;
}

/**
 * For chains that aggregate errors rather than stop at the first (authentication and authorization, as in
 * Kubernetes' union authenticator and authorizer): a tap that fails with a PluginFailure is handed to
 * `onFailure` and counts as having no opinion, so the next tap gets its turn. Install it once per hook,
 * after the kernel's interceptor (which names the plugin).
 */
export function skipFailingTaps<Args extends unknown[]>(hook: HookOf<Args>, onFailure: (failure: PluginFailure, args: Args) => void): void {
  hook.intercept({
    name: 'skip-failing-taps',
    register(tap: RegisteredTap): RegisteredTap {
      return guardTap(tap, (err, args) => {
        if (!isPluginFailure(err)) throw err;
        // The hook calls its taps with its own arguments, which is what `Args` names.
        onFailure(err, args as Args);
        return undefined;
      });
    },
  });
}
