import { currentTrace, tracingActive, withSpan, attribute, type SpanStart } from './context.js';
import { jsonDiff, summarizeDiff } from './diff.js';
import type { SpanAttributes } from './span.js';

/** The hooks a request or a pod passes through: each of their taps becomes a span when traced. */
export const TRACED_HOOKS: ReadonlySet<string> = new Set(['authenticate', 'flowControl', 'authorize', 'mutate', 'validate', 'audit', 'podAdmit', 'podSync']);

type TapFn = (...args: any[]) => unknown;

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function objectOf(args: unknown[]): unknown {
  const request = args[0];
  return typeof request === 'object' && request !== null ? (request as { object?: unknown }).object : undefined;
}

/** What a tap answered, in a span's attributes. */
function describe(hook: string, args: unknown[], value: unknown, attrs: SpanAttributes, before: unknown): void {
  switch (hook) {
    case 'authenticate': {
      const user = (value as { user?: { username?: string } } | undefined)?.user?.username;
      attrs.result = user === undefined ? 'no opinion' : `user ${user}`;
      return;
    }
    case 'authorize': {
      const decision = value as { decision?: string; reason?: string } | undefined;
      attrs.result = decision?.decision ?? 'no opinion';
      if (decision?.reason) attrs.reason = attribute(decision.reason);
      return;
    }
    case 'flowControl':
      attrs.result = value === undefined ? 'not controlled' : 'granted';
      return;
    case 'mutate': {
      const { ops, truncated } = jsonDiff(before, objectOf(args));
      attrs.result = ops.length === 0 ? 'unchanged' : `${ops.length}${truncated ? '+' : ''} change${ops.length === 1 ? '' : 's'}`;
      if (ops.length > 0) attrs.diff = attribute(summarizeDiff(ops, truncated));
      return;
    }
    case 'podAdmit': {
      const refusal = value as { reason?: string } | undefined;
      attrs.result = refusal ? `rejected: ${refusal.reason ?? ''}` : 'admitted';
      return;
    }
    default:
      return;
  }
}

function traced(hook: string, start: SpanStart, fn: TapFn, args: unknown[]): unknown {
  return withSpan(start, (span) => {
    // Only mutations are worth a copy: the diff is the point of a mutating tap's span.
    const before = hook === 'mutate' ? structuredClone(objectOf(args)) : undefined;
    const out = fn(...args);
    const done = (value: unknown) => {
      if (span) describe(hook, args, value, span.attrs, before);
      return value;
    };
    return isPromise(out) ? out.then(done) : done(out);
  });
}

/**
 * Wraps a tap of a traced hook so that, inside an open trace, its call becomes a span (plugin, duration, what it
 * answered, a mutating tap's changes). Outside any trace it costs one check of a number.
 */
export function traceTap(hook: string, plugin: string, tap: { name: string; type: string; fn: TapFn }): TapFn {
  if (!TRACED_HOOKS.has(hook)) return tap.fn;
  const { fn } = tap;
  const start: SpanStart = { name: tap.name, kind: 'hook', hook, plugin };
  if (tap.type === 'async') {
    return (...args: unknown[]) => {
      if (!tracingActive() || currentTrace() === undefined) return fn(...args);
      const callback = args.pop() as (err?: unknown, result?: unknown) => void;
      let settle!: (result: unknown) => void;
      let fail!: (err: unknown) => void;
      const settled = new Promise((resolve, reject) => {
        settle = resolve;
        fail = reject;
      });
      const run = () => {
        fn(...args, (err?: unknown, result?: unknown) => (err ? fail(err) : settle(result)));
        return settled;
      };
      (traced(hook, start, run, args) as Promise<unknown>).then(
        (result: unknown) => callback(null, result),
        (err: unknown) => callback(err),
      );
      return undefined;
    };
  }
  // `arguments` rather than a rest parameter: the untraced path then allocates nothing.
  return function (this: unknown) {
    // eslint-disable-next-line prefer-rest-params
    const args = arguments as unknown as unknown[];
    if (!tracingActive() || currentTrace() === undefined) return fn.apply(this, args);
    return traced(hook, start, fn, Array.from(args));
  };
}
