import type { ControllerContext } from '@skiff/kernel';

/**
 * Hands a controller's long-running work to whoever started it, so stopping waits for it. A context
 * without `track` (one built by hand) gets failures logged instead of left unhandled.
 */
export function trackWork(ctx: ControllerContext, work: Promise<unknown>): void {
  if (ctx.track) ctx.track(work);
  else work.catch((err) => ctx.logger.error({ err }, 'controller stopped with an error'));
}
