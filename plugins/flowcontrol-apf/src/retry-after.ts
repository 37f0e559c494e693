/** The longest Retry-After a rejection asks for. */
export const MAX_RETRY_AFTER_SECONDS = 8;

/**
 * The Retry-After of one priority level's rejections: 1 s at first, doubled (up to 8 s) when the level rejected in
 * the second before too, halved for every second it rejected nothing. Clients of a level that stays overloaded back
 * off further; once it recovers they come back quickly.
 */
export class RetryAfter {
  private seconds = 1;
  private lastSecond = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: () => number) {}

  /** Notes a rejection; answers the seconds to tell its client. */
  rejected(): number {
    const second = Math.floor(this.clock() / 1000);
    if (second !== this.lastSecond) {
      const gap = second - this.lastSecond;
      this.seconds = Math.max(1, Math.floor(this.seconds / 2 ** (gap - 1)));
      if (gap === 1) this.seconds = Math.min(MAX_RETRY_AFTER_SECONDS, this.seconds * 2);
      this.lastSecond = second;
    }
    return this.seconds;
  }
}
