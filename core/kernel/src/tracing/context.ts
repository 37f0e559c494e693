import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { now, type Span, type SpanAttributes, type SpanKind } from './span.js';
import { formatTraceParent, parseTraceParent } from './traceparent.js';

/** An open trace: where its spans go. Implemented by the Tracer that opened it. */
export interface OpenTrace {
  readonly id: string;
  /** True once the trace ran out of time or spans: its contexts then record nothing. */
  readonly closed: boolean;
  record(span: Span): void;
}

/** Where code runs within a trace: the trace, the span new spans are children of, and the component running. */
export interface TraceContext {
  readonly trace: OpenTrace;
  readonly span: string;
  readonly component: string;
}

/** What a new span says about itself; times and ids are filled in. */
export interface SpanStart {
  name: string;
  kind: SpanKind;
  /** Defaults to the component of the context it starts in. */
  component?: string;
  plugin?: string;
  hook?: string;
  attrs?: SpanAttributes;
}

interface SharedState {
  readonly storage: AsyncLocalStorage<TraceContext>;
  /** Traces open in this process, over every kernel. */
  open: number;
  /** Store keys being written by traced requests, to the write's context: the watch fan-out links events to them. */
  readonly writes: Map<string, { ctx: TraceContext; until: number }>;
  /** Watch events that carry a trace on, to the context of their fan-out. */
  readonly events: WeakMap<object, TraceContext>;
  /** Every trace open in this thread, by id: where spans recorded in another thread go. */
  readonly traces: Map<string, OpenTrace>;
}

// One state per process, under a global symbol, so plugins that bundle their own copy of @skiff/kernel see the
// same context. The AsyncLocalStorage only runs (Node 20 installs a promise hook for it) while a trace is open.
const KEY = Symbol.for('skiff.tracing');
const state: SharedState = ((globalThis as Record<symbol, unknown>)[KEY] as SharedState | undefined) ?? {
  storage: new AsyncLocalStorage<TraceContext>(),
  open: 0,
  writes: new Map(),
  events: new WeakMap(),
  traces: new Map(),
};
(globalThis as Record<symbol, unknown>)[KEY] = state;

/** True while any trace is open in this process: the one check traced code makes when tracing is off. */
export function tracingActive(): boolean {
  return state.open > 0;
}

/** The trace the running code belongs to, if any trace is open and it belongs to an open one. */
export function currentTrace(): TraceContext | undefined {
  if (state.open === 0) return undefined;
  const ctx = state.storage.getStore();
  return ctx === undefined || ctx.trace.closed ? undefined : ctx;
}

/** Runs `fn` in `ctx`: spans it starts (and the async work it starts) become `ctx.span`'s children. */
export function runInTrace<T>(ctx: TraceContext, fn: () => T): T {
  return state.storage.run(ctx, fn);
}

/** @internal The Tracer counts its open traces here. */
export function noteTraceOpened(trace: OpenTrace): void {
  state.open++;
  state.traces.set(trace.id, trace);
}

/** @internal Called once per closed trace; the last one switches the context tracking off. */
export function noteTraceClosed(trace: OpenTrace): void {
  if (state.traces.get(trace.id) === trace) state.traces.delete(trace.id);
  state.open = Math.max(0, state.open - 1);
  if (state.open === 0) {
    state.storage.disable();
    state.writes.clear();
  }
}

export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** The traceparent header that continues `ctx` in another component. */
export function traceParentOf(ctx: TraceContext): string {
  return formatTraceParent(ctx.trace.id, ctx.span);
}

/** A span being timed: add attributes while it runs. */
export interface LiveSpan {
  readonly id: string;
  readonly attrs: SpanAttributes;
}

const MAX_ATTRIBUTE = 256;

/** Cuts long strings so one span stays small. */
export function attribute(value: string): string {
  return value.length > MAX_ATTRIBUTE ? `${value.slice(0, MAX_ATTRIBUTE - 1)}…` : value;
}

/**
 * Times `run` as a child span of the current trace context, and runs it in the span's own context so what it
 * does is nested under it. Outside a trace it just calls `run` (with no span): one check, nothing allocated.
 */
export function withSpan<T>(start: SpanStart, run: (span: LiveSpan | undefined) => T, parent: TraceContext | undefined = currentTrace()): T {
  if (parent === undefined) return run(undefined);
  const span: LiveSpan = { id: newSpanId(), attrs: { ...start.attrs } };
  const ctx: TraceContext = { trace: parent.trace, span: span.id, component: start.component ?? parent.component };
  const began = now();
  const finish = (error?: unknown) => recordFinished(parent, start, span, ctx.component, began, error);
  let result: T;
  try {
    result = runInTrace(ctx, () => run(span));
  } catch (err) {
    finish(err);
    throw err;
  }
  if (result instanceof Promise) {
    return result.then(
      (value) => {
        finish();
        return value;
      },
      (err: unknown) => {
        finish(err);
        throw err;
      },
    ) as T;
  }
  finish();
  return result;
}

function recordFinished(parent: TraceContext, start: SpanStart, span: LiveSpan, component: string, began: number, error?: unknown): void {
  const finished: Span = { trace: parent.trace.id, id: span.id, name: start.name, kind: start.kind, component, start: began, end: now() };
  if (parent.span !== '') finished.parent = parent.span;
  if (start.plugin !== undefined) finished.plugin = start.plugin;
  if (start.hook !== undefined) finished.hook = start.hook;
  if (error !== undefined) finished.error = attribute(error instanceof Error ? error.message : String(error));
  if (Object.keys(span.attrs).length > 0) finished.attrs = span.attrs;
  parent.trace.record(finished);
}

/** How long after a traced write its watch events are still linked to it. */
const WRITE_LINK_MS = 2000;

/**
 * Marks `key` as being written in `ctx` (the store write's span), so the watch events of that write continue
 * the trace (see `linkedWrite`). Call before the write: watchers may hear of it before the write's promise settles.
 */
export function noteWrite(key: string, ctx: TraceContext): void {
  const at = performance.now();
  if (state.writes.size > 1000) for (const [k, write] of state.writes) if (write.until < at) state.writes.delete(k);
  state.writes.set(key, { ctx, until: at + WRITE_LINK_MS });
}

/** The context of a traced write of `key` made in the last moments, if any. */
export function linkedWrite(key: string): TraceContext | undefined {
  const write = state.writes.get(key);
  if (write === undefined) return undefined;
  if (write.until < performance.now() || write.ctx.trace.closed) {
    state.writes.delete(key);
    return undefined;
  }
  return write.ctx;
}

/** Attaches a trace to a watch event object (in-process watchers receive the object itself). */
export function markEvent(event: object, ctx: TraceContext): void {
  state.events.set(event, ctx);
}

/** The trace a watch event continues, if it was marked and the trace is still open. */
export function traceOfEvent(event: object): TraceContext | undefined {
  const ctx = state.events.get(event);
  return ctx === undefined || ctx.trace.closed ? undefined : ctx;
}

/** Records spans another thread recorded into the traces open here; spans of traces not open here are dropped. */
export function recordForeignSpans(spans: readonly Span[]): void {
  for (const span of spans) state.traces.get(span.trace)?.record(span);
}

/**
 * A trace whose recorder is in another thread (the API server's): spans go back through `send`, batched per
 * tick. It stays open here until nothing was recorded in it for `idleMs`.
 */
class RemoteTrace implements OpenTrace {
  closed = false;
  private pending: Span[] = [];
  private lastActivity = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly id: string,
    private readonly send: (spans: Span[]) => void,
    private readonly idleMs: number,
  ) {
    noteTraceOpened(this);
    this.timer = setInterval(() => {
      if (performance.now() - this.lastActivity >= this.idleMs) this.close();
    }, 1000).unref();
  }

  record(span: Span): void {
    if (this.closed) return;
    this.lastActivity = performance.now();
    if (this.pending.push(span) === 1) setImmediate(() => this.flush());
  }

  /** Keeps the trace open while events of it keep arriving. */
  touch(): void {
    this.lastActivity = performance.now();
  }

  private flush(): void {
    const spans = this.pending;
    this.pending = [];
    if (spans.length > 0) this.send(spans);
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    clearInterval(this.timer);
    noteTraceClosed(this);
  }
}

/**
 * The context that continues `traceparent` in this thread when the trace's recorder is in another one: spans
 * recorded in it are handed to `send` (which posts them to the recorder's thread, see `recordForeignSpans`).
 */
export function joinRemoteTrace(traceparent: string, component: string, send: (spans: Span[]) => void, idleMs = 10_000): TraceContext | undefined {
  const parent = parseTraceParent(traceparent);
  if (!parent) return undefined;
  let trace = state.traces.get(parent.trace);
  if (trace instanceof RemoteTrace) trace.touch();
  if (trace === undefined || trace.closed) trace = new RemoteTrace(parent.trace, send, idleMs);
  return { trace, span: parent.span, component };
}

/** Records a step that already happened (an instant one when `end` is left out) under `parent`; answers its context. */
export function recordSpan(parent: TraceContext, start: SpanStart, began: number, end: number = began): TraceContext {
  const span: Span = {
    trace: parent.trace.id,
    id: newSpanId(),
    name: start.name,
    kind: start.kind,
    component: start.component ?? parent.component,
    start: began,
    end,
  };
  if (parent.span !== '') span.parent = parent.span;
  if (start.plugin !== undefined) span.plugin = start.plugin;
  if (start.hook !== undefined) span.hook = start.hook;
  if (start.attrs !== undefined && Object.keys(start.attrs).length > 0) span.attrs = start.attrs;
  parent.trace.record(span);
  return { trace: parent.trace, span: span.id, component: span.component };
}
