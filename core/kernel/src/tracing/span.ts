/** What a span is about: the part of the journey from a request to a running container it times. */
export type SpanKind = 'request' | 'hook' | 'step' | 'store' | 'watch' | 'controller' | 'scheduler' | 'kubelet' | 'runtime' | 'network';

/** Flat attributes: strings are cut at 256 characters so one span stays small. */
export type SpanAttributes = Record<string, string | number | boolean>;

/**
 * One timed step of a traced request or of what it caused. Times are milliseconds since the epoch with
 * fractions (`performance.timeOrigin + performance.now()`), so spans from several threads line up.
 */
export interface Span {
  /** 32 hex digits, as in a W3C traceparent. */
  trace: string;
  /** 16 hex digits. */
  id: string;
  parent?: string;
  name: string;
  kind: SpanKind;
  /** apiserver, controller-manager, scheduler, kubelet/<node>… */
  component: string;
  /** The package whose tap or code ran. */
  plugin?: string;
  /** The kernel hook, for a tap's span. */
  hook?: string;
  start: number;
  end: number;
  /** Set when the step failed: the error's message. */
  error?: string;
  attrs?: SpanAttributes;
}

/** Milliseconds since the epoch, sub-millisecond. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}
