import type { Logger } from '@skiff/kernel';

/** For callers that pass no logger (tests, one-off scripts): logs go nowhere. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
