import { basename } from 'node:path';
import type { ControllerRegistry, Kernel } from '@skiff/kernel';
import type { ObservedRecord } from './logs.js';

/** An interactive terminal the spinner is drawn on (stdout, when it is a TTY and not CI). */
export interface Terminal {
  write(text: string): void;
}

/** Where progress goes: lines (`out`) and, on a terminal, the spinner line. */
export interface ProgressOutput {
  out(line: string): void;
  terminal?: Terminal;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[2K';

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)}s`;
}

/**
 * The steps of a start as short lines, `skiff: store opened (0.04s)`. On a terminal a spinner line below them says
 * what is under way (and for how long); it is cleared before each line and when the start ends.
 */
export class StartProgress {
  private activity: { text: string; since: number } | undefined;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly output: ProgressOutput,
    private readonly options: { now?: () => number; frameMs?: number } = {},
  ) {}

  now(): number {
    return this.options.now ? this.options.now() : performance.now();
  }

  /** What is under way now: the spinner's text (nothing is printed without a terminal). */
  begin(text: string): void {
    this.activity = { text, since: this.now() };
    if (!this.output.terminal) return;
    this.timer ??= setInterval(() => this.draw(), this.options.frameMs ?? 80).unref();
    this.draw();
  }

  /** Nothing is under way until the next `begin`: the spinner line stays empty. */
  idle(): void {
    this.activity = undefined;
  }

  /** A finished step: one line with how long it took. */
  step(text: string, ms: number): void {
    this.line(`skiff: ${text} (${seconds(ms)})`);
  }

  /** A line printed without breaking the spinner. */
  line(text: string): void {
    if (this.output.terminal && this.timer) this.output.terminal.write(CLEAR_LINE);
    this.output.out(text);
    if (this.timer) this.draw();
  }

  /** The start ended: the spinner goes away. */
  end(): void {
    this.activity = undefined;
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.output.terminal?.write(CLEAR_LINE);
  }

  private draw(): void {
    if (!this.output.terminal) return;
    if (!this.activity) return this.output.terminal.write(CLEAR_LINE);
    const frame = FRAMES[this.frame++ % FRAMES.length]!;
    this.output.terminal.write(`${CLEAR_LINE}${frame} ${this.activity.text}… ${seconds(this.now() - this.activity.since)}`);
  }
}

/** What the start of one lifecycle tap is called while it runs, and when it is done. */
interface StepNames {
  running: string;
  done(): string | undefined;
}

/** Unnamed lifecycle taps get a line of their own only when they take this long. */
const SLOW_STEP_MS = 1000;

/**
 * Shows `kernel`'s start on `progress`: each lifecycle tap of the start hook, the named ones (store, API server,
 * controllers, scheduler, nodes) as a line each, the others on the spinner (and as a line when slow); and, from the
 * records the runtime and kubelet log, each node's steps (containerd started, pause image ready, kubelet started).
 * Returns what to hand log records to; `stop()` ends the watch (the start's interceptor stays, inert).
 */
export function watchStart(
  kernel: Kernel,
  progress: StartProgress,
  apiServerUrl: () => string | undefined,
): { onRecord(record: ObservedRecord): void; stop(): void } {
  let watching = true;
  let current: { name: string; started: number; names: StepNames | undefined } | undefined;
  let mark = progress.now();
  let controllers: ControllerRegistry | undefined;
  let nodesStarted = 0;

  const named: Record<string, () => StepNames> = {
    '@skiff/store': () => ({ running: 'opening the store', done: () => 'store opened' }),
    '@skiff/plugin-store-etcd': () => ({ running: 'connecting to etcd', done: () => 'store connected (etcd)' }),
    '@skiff/apiserver': () => ({
      running: 'starting the API server',
      done: () => {
        const url = apiServerUrl();
        return url ? `API server serving at ${url}` : 'API server started';
      },
    }),
    '@skiff/controller-manager': () => ({
      running: 'starting the controllers',
      done: () => {
        const count = controllers?.list().length;
        return count === undefined ? 'controller manager started' : `${count} controller${count === 1 ? '' : 's'} started`;
      },
    }),
    '@skiff/scheduler': () => ({ running: 'starting the scheduler', done: () => 'scheduler started' }),
    '@skiff/kubelet': () => {
      nodesStarted = 0;
      return {
        running: 'starting the nodes',
        done: () => (nodesStarted === 0 ? undefined : `${nodesStarted} node${nodesStarted === 1 ? '' : 's'} started`),
      };
    },
  };

  const finish = () => {
    if (!current) return;
    progress.idle();
    const ms = progress.now() - current.started;
    const text = current.names ? current.names.done() : ms >= SLOW_STEP_MS ? `${current.name} started` : undefined;
    if (text) progress.step(text, ms);
    current = undefined;
  };

  kernel.hooks.start.intercept({
    name: 'skiff-up-progress',
    tap(tap) {
      if (!watching) return;
      finish();
      const names = named[tap.name]?.();
      current = { name: tap.name, started: progress.now(), names };
      mark = current.started;
      progress.begin(names?.running ?? `starting ${tap.name}`);
    },
    done() {
      if (watching) finish();
    },
  });
  kernel.hooks.controllers.intercept({
    name: 'skiff-up-progress',
    call(registry) {
      if (watching) controllers = registry;
    },
  });

  const nodeStep = (record: ObservedRecord): string | undefined => {
    const { fields, message } = record;
    switch (message) {
      case 'containerd started':
        return 'containerd started';
      case 'image archive imported':
        return `images imported from ${basename(String(fields.file))}`;
      case 'sandbox image built from busybox-static and imported':
        return `pause image ${String(fields.image)} ready`;
      case 'kubelet started':
        nodesStarted += 1;
        return `kubelet started (runtime ${String(fields.runtime)}, network ${String(fields.network)})`;
      default:
        return undefined;
    }
  };

  return {
    onRecord(record) {
      if (!watching || typeof record.fields.node !== 'string') return;
      const text = nodeStep(record);
      if (!text) return;
      const now = progress.now();
      progress.step(`${record.fields.node}: ${text}`, now - mark);
      mark = now;
    },
    stop() {
      watching = false;
      progress.end();
    },
  };
}
