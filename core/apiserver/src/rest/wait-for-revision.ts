import { setTimeout as delay } from 'node:timers/promises';
import { errors } from '@skiff/api';
import type { RestContext } from './context.js';
import { parseResourceVersion } from './resource-version.js';

/** How often the store's revision is looked at while waiting: short against the wait, cheap for the CPU. */
const POLL_MS = 20;

/**
 * A read at a resourceVersion newer than the store's revision (one another API server handed out, or a
 * write still committing) waits for the store to reach it, as the Kubernetes watch cache does, and
 * answers 504 "Too large resource version" with Retry-After 1 when it does not arrive within
 * `resourceVersionWaitMs`. A client going away or the server stopping ends the wait.
 */
export async function waitForRevision(ctx: RestContext, revision: number): Promise<void> {
  const { store, stopping, resourceVersionWaitMs } = ctx.core;
  const deadline = Date.now() + resourceVersionWaitMs;
  while (store.revision() < revision) {
    if (stopping.aborted) throw errors.unavailable('the API server is stopping');
    if (ctx.request.signal?.aborted) throw errors.timeout(`the client went away while waiting for resource version ${revision}, current: ${store.revision()}`);
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw tooLargeResourceVersion(revision, store.revision());
    await delay(Math.min(POLL_MS, remaining));
  }
}

/**
 * A get's resourceVersion: unset is the latest state, "0" any state (the latest here), a revision "not
 * older than" it, so the store must have reached it before the latest state is read.
 */
export async function waitForRequestedRevision(ctx: RestContext): Promise<void> {
  const revision = parseResourceVersion(ctx.request.query.resourceVersion, 'resourceVersion');
  if (revision) await waitForRevision(ctx, revision);
}

function tooLargeResourceVersion(requested: number, current: number) {
  return errors.timeout(`Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}
