import { TraceBuffer } from './buffer.js';
import { newSpanId, newTraceId, noteTraceClosed, noteTraceOpened, type OpenTrace, type TraceContext } from './context.js';
import { now, type Span } from './span.js';
import { parseTraceParent } from './traceparent.js';

/** `trace` in skiff.config: what is recorded and how much is kept. */
export interface TraceOptions {
  /** `on` traces every request (and what it causes); `off` only what `skiff trace --next` arms. */
  mode: 'off' | 'on';
  /** Spans the ring keeps, over all traces. */
  spans: number;
  /** Spans one trace may record; it closes at that count. */
  maxSpans: number;
  /** A trace closes this long after it opened… */
  maxSeconds: number;
  /** …or once nothing was recorded in it for this long. */
  idleSeconds: number;
}

export const TRACE_DEFAULTS: Readonly<TraceOptions> = Object.freeze({ mode: 'off', spans: 20_000, maxSpans: 5_000, maxSeconds: 60, idleSeconds: 10 });

/** Which requests `--next` arms for: the next create/update/patch/delete, or any request. */
export type ArmFilter = 'mutating' | 'any';

/** What the API server tells the tracer about a request it is about to serve. */
export interface RequestToTrace {
  /** The request's traceparent header. */
  traceparent?: string | string[];
  mutating: boolean;
  /** A request that arming skips: the API server's own loopback clients, the trace endpoint itself. */
  exempt: boolean;
}

/** What `skiff trace` learns about one trace. */
export interface TraceSummary {
  id: string;
  open: boolean;
  spans: number;
  /** When the last span of it was recorded (ms since the epoch). */
  lastActivity: number;
}

export interface TracerStatus {
  mode: TraceOptions['mode'];
  capacity: number;
  held: number;
  dropped: number;
  open: number;
  armed: number;
}

class RecordingTrace implements OpenTrace {
  closed = false;
  spans = 0;
  lastActivity = now();
  readonly opened = now();

  constructor(
    readonly id: string,
    private readonly tracer: Tracer,
    private readonly options: TraceOptions,
  ) {
    noteTraceOpened(this);
  }

  record(span: Span): void {
    if (this.closed) return;
    this.tracer.buffer.add(span);
    this.lastActivity = now();
    if (++this.spans >= this.options.maxSpans) this.close();
  }

  /** Whether it ran out of time (or went quiet) at `at`. */
  expired(at: number): boolean {
    return at - this.opened >= this.options.maxSeconds * 1000 || at - this.lastActivity >= this.options.idleSeconds * 1000;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    noteTraceClosed(this);
    this.tracer.closed(this);
  }
}

/** Traces open at once, at most: with mode `on` every request opens one; past this the oldest is closed. */
const MAX_OPEN_TRACES = 10_000;

/**
 * A kernel's recorder of traces: which requests to trace, the open traces, and the ring their spans go to.
 * Spans are recorded by the kernel's tap interceptor (every hook a request passes) and by components at the
 * points between hooks (the store write, the watch fan-out, a controller's sync, a runtime call); see
 * docs/tracing.md.
 */
export class Tracer {
  readonly buffer: TraceBuffer;
  private readonly open = new Map<string, RecordingTrace>();
  private readonly recent = new Map<string, RecordingTrace>();
  private readonly armed: { trace: string; filter: ArmFilter }[] = [];
  private sweeper: NodeJS.Timeout | undefined;

  constructor(readonly options: TraceOptions = TRACE_DEFAULTS) {
    this.buffer = new TraceBuffer(options.spans);
  }

  /**
   * False when no request can be traced now (mode off, nothing armed, no trace open, no traceparent): the API
   * server's one check per request while tracing is off.
   */
  mayTrace(hasTraceparent: boolean): boolean {
    return this.options.mode === 'on' || this.armed.length > 0 || (hasTraceparent && this.open.size > 0);
  }

  /** Makes the next request that matches `filter` the root of a new trace; returns its id. */
  arm(filter: ArmFilter): string {
    const trace = newTraceId();
    this.armed.push({ trace, filter });
    return trace;
  }

  /** Opens a trace with a known id (an armed one, or one whose root is elsewhere). */
  private openTrace(id: string): RecordingTrace {
    const existing = this.open.get(id);
    if (existing) return existing;
    if (this.open.size >= MAX_OPEN_TRACES) this.open.values().next().value!.close();
    const trace = new RecordingTrace(id, this, this.options);
    this.open.set(id, trace);
    // One timer for every open trace, while any is open.
    this.sweeper ??= setInterval(() => this.sweep(), 1000).unref();
    return trace;
  }

  /** Closes the traces that ran out of time or went quiet. */
  private sweep(): void {
    const at = now();
    for (const trace of [...this.open.values()]) if (trace.expired(at)) trace.close();
  }

  /**
   * The context a request runs in, when it is traced: it carries the traceparent of a trace open here (or of
   * any trace, with mode `on`), or it is the one an armed `--next` waits for, or mode is `on`. Undefined: not
   * traced, and nothing is recorded for it.
   */
  startRequest(request: RequestToTrace, component: string): TraceContext | undefined {
    const parent = parseTraceParent(request.traceparent);
    if (parent) {
      const open = this.open.get(parent.trace);
      if (open) return { trace: open, span: parent.span, component };
      if (this.options.mode === 'on' && !this.recent.has(parent.trace)) return { trace: this.openTrace(parent.trace), span: parent.span, component };
      return undefined;
    }
    if (!request.exempt) {
      const index = this.armed.findIndex((armed) => armed.filter === 'any' || request.mutating);
      if (index >= 0) {
        const [armed] = this.armed.splice(index, 1);
        return { trace: this.openTrace(armed!.trace), span: '', component };
      }
    }
    if (this.options.mode === 'on' && !request.exempt) return { trace: this.openTrace(newTraceId()), span: '', component };
    return undefined;
  }

  /** The context that continues `traceparent` in this process, if its trace is open here. */
  join(traceparent: string | undefined, component: string): TraceContext | undefined {
    const parent = parseTraceParent(traceparent);
    const open = parent && this.open.get(parent.trace);
    return open ? { trace: open, span: parent.span, component } : undefined;
  }

  /** @internal */
  closed(trace: RecordingTrace): void {
    this.open.delete(trace.id);
    if (this.open.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
    // Remembered for a while, so a late traceparent of a closed trace does not open it again under mode `on`.
    this.recent.set(trace.id, trace);
    if (this.recent.size > 1000) this.recent.delete(this.recent.keys().next().value!);
  }

  summary(id: string): TraceSummary | undefined {
    const trace = this.open.get(id) ?? this.recent.get(id);
    if (trace) return { id, open: !trace.closed, spans: trace.spans, lastActivity: trace.lastActivity };
    return this.armed.some((armed) => armed.trace === id) ? { id, open: true, spans: 0, lastActivity: 0 } : undefined;
  }

  /** True while `id` is armed and no request has matched it yet. */
  isWaiting(id: string): boolean {
    return this.armed.some((armed) => armed.trace === id);
  }

  /** Drops an armed trace nobody matched (the CLI gave up waiting). */
  disarm(id: string): void {
    const index = this.armed.findIndex((armed) => armed.trace === id);
    if (index >= 0) this.armed.splice(index, 1);
  }

  status(): TracerStatus {
    return {
      mode: this.options.mode,
      capacity: this.buffer.capacity,
      held: this.buffer.size,
      dropped: this.buffer.dropped,
      open: this.open.size,
      armed: this.armed.length,
    };
  }

  /** Closes every open trace (the kernel stops). */
  close(): void {
    for (const trace of [...this.open.values()]) trace.close();
    this.armed.length = 0;
  }

  /** A new root span id, for a request that starts a trace. */
  static rootSpanId(): string {
    return newSpanId();
  }
}
