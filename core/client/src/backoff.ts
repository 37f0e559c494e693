export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

/**
 * Exponential retry delays, doubled per failure and capped, with up to 20% jitter so that many clients
 * failing together (an API server restart) do not come back in lockstep.
 */
export class Backoff {
  private nextMs: number;

  constructor(private readonly options: BackoffOptions) {
    this.nextMs = options.initialMs;
  }

  next(): number {
    const delay = Math.min(this.options.maxMs, this.nextMs * (1 + Math.random() * 0.2));
    this.nextMs = Math.min(this.options.maxMs, this.nextMs * 2);
    return delay;
  }

  reset(): void {
    this.nextMs = this.options.initialMs;
  }
}
