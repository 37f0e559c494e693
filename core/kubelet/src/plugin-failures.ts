import { errorMessage } from '@skiff/api';
import { currentTrace, spanAttribute, tracingActive, withSpan, type Logger, type SpanAttributes } from '@skiff/kernel';
import { KubeletError } from './errors.js';
import type { KubeletMetrics, RuntimeOperationSeries } from './metrics.js';

export interface NodePluginIdentity {
  kind: 'container runtime' | 'pod network' | 'service proxy';
  /** The runtime's or network's registered name ("simulated", "ipam"). */
  name: string;
  /** The plugin package that registered it, when known. */
  plugin?: string;
}

/**
 * Answers a runtime or network gives on purpose pass unchanged: CRI statuses (`rpc error: code = …`, as
 * Kubernetes shows them verbatim) and coded Skiff errors (an exhausted address range).
 */
function isDeliberate(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message, grpcCode } = err as { code?: unknown; message?: unknown; grpcCode?: unknown };
  return (
    typeof grpcCode === 'string' ||
    (typeof code === 'string' && code.startsWith('SKIFF_ERR_')) ||
    (typeof message === 'string' && message.startsWith('rpc error: '))
  );
}

const FAILURE_CODES = {
  'container runtime': 'SKIFF_ERR_KUBELET_RUNTIME_FAILED',
  'pod network': 'SKIFF_ERR_KUBELET_NETWORK_FAILED',
  'service proxy': 'SKIFF_ERR_KUBELET_SERVICE_PROXY_FAILED',
} as const;
const LOG_KEYS = { 'container runtime': 'runtime', 'pod network': 'network', 'service proxy': 'serviceProxy' } as const;

function named(identity: NodePluginIdentity, method: string, err: unknown, logger: Logger): unknown {
  if (isDeliberate(err)) return err;
  const from = identity.plugin ? ` (plugin "${identity.plugin}")` : '';
  const detail = errorMessage(err);
  const code = FAILURE_CODES[identity.kind];
  const failure = new KubeletError(code, { name: identity.name, from, method, detail }, { cause: err });
  logger.error({ err, [LOG_KEYS[identity.kind]]: identity.name, plugin: identity.plugin, method }, failure.message);
  return failure;
}

/** Whether a method answered asynchronously: anything with a `then` method. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && 'then' in value && typeof value.then === 'function';
}

const SPAN_PREFIX = { 'container runtime': 'cri', 'pod network': 'cni', 'service proxy': 'proxy' } as const;

/** The calls that change something are spans in a trace; reads the kubelet polls (status, list, stats) are not. */
function tracedMethod(method: string): boolean {
  return !/^(list|version|status|imageStatus|podSandboxStatus|containerStatus|nodeUsage|close|check|peers|podCIDR)/.test(method) && !method.endsWith('Status');
}

/** What a traced runtime or network call was about: the pod, the container, the image. */
function callAttrs(identity: NodePluginIdentity, method: string, args: unknown[]): SpanAttributes {
  const attrs: SpanAttributes = { [LOG_KEYS[identity.kind]]: identity.name };
  const [first, second] = args as [unknown, unknown];
  const meta = (value: unknown) =>
    typeof value === 'object' && value !== null ? (value as { metadata?: { name?: string; namespace?: string; uid?: string } }).metadata : undefined;
  if (method === 'pullImage' && typeof first === 'string') attrs.image = spanAttribute(first);
  const sandbox = method === 'runPodSandbox' ? meta(first) : undefined;
  if (sandbox?.name) attrs.pod = `${sandbox.namespace ?? ''}/${sandbox.name}`;
  if (sandbox?.uid) attrs.uid = sandbox.uid;
  if (method === 'createContainer' && typeof second === 'object' && second !== null) {
    const config = second as { metadata?: { name?: string }; image?: string | { image?: string } };
    if (config.metadata?.name) attrs.container = config.metadata.name;
    const image = typeof config.image === 'string' ? config.image : config.image?.image;
    if (image) attrs.image = spanAttribute(image);
  }
  if (typeof first === 'string' && /Container|Sandbox/.test(method) && method !== 'runPodSandbox') attrs.id = first.slice(0, 13);
  return attrs;
}

/** Calls a runtime's or network's function; an unexpected failure is logged and rethrown naming it and its plugin. */
export async function callNamed<T>(identity: NodePluginIdentity, method: string, logger: Logger, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw named(identity, method, err, logger);
  }
}

/** `call`, counted and timed as a runtime operation (kubelet_runtime_operations_*). */
function counting(call: (...args: unknown[]) => unknown, operation: RuntimeOperationSeries): (...args: unknown[]) => unknown {
  const done = (start: number, failed: boolean) => {
    operation.total.inc();
    operation.duration.observe((performance.now() - start) / 1000);
    if (failed) operation.errors.inc();
  };
  return (...args) => {
    const start = performance.now();
    let result: unknown;
    try {
      result = call(...args);
    } catch (err) {
      done(start, true);
      throw err;
    }
    if (!isThenable(result)) {
      done(start, false);
      return result;
    }
    return result.then(
      (value) => {
        done(start, false);
        return value;
      },
      (err: unknown) => {
        done(start, true);
        throw err;
      },
    );
  };
}

/**
 * The runtime or network as the kubelet uses it: every method the same, except that an unexpected failure
 * (a bug in the plugin, not a CRI status) is logged and rethrown as an error naming the runtime or network
 * and the plugin that registered it — the message the pod's container state and events then carry. With `metrics`
 * (the container runtime), every CRI call is also counted and timed by its upstream `operation_type`.
 */
export function namingFailures<T extends object>(target: T, identity: NodePluginIdentity, logger: Logger, metrics?: KubeletMetrics): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (!wrapped.has(property)) {
        const method = String(property);
        const plain = (...args: unknown[]) => {
          let result: unknown;
          try {
            result = value.apply(object, args);
          } catch (err) {
            throw named(identity, method, err, logger);
          }
          if (!isThenable(result)) return result;
          return result.then(undefined, (err: unknown) => {
            throw named(identity, method, err, logger);
          });
        };
        const operation = metrics?.operation(method);
        const call = operation ? counting(plain, operation) : plain;
        const traced = tracedMethod(method);
        wrapped.set(
          property,
          traced
            ? (...args: unknown[]) =>
                tracingActive() && currentTrace()
                  ? withSpan(
                      {
                        name: `${SPAN_PREFIX[identity.kind]} ${method}`,
                        kind: identity.kind === 'container runtime' ? 'runtime' : 'network',
                        ...(identity.plugin ? { plugin: identity.plugin } : {}),
                        attrs: callAttrs(identity, method, args),
                      },
                      () => call(...args),
                    )
                  : call(...args)
            : call,
        );
      }
      return wrapped.get(property);
    },
  });
}
