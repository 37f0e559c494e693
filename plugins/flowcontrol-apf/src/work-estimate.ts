import type { FlowControlRequest } from '@skiff/kernel';

/** Kubernetes' list work estimator: a seat per hundred objects a list reads, one seat at least, ten at most. */
export const OBJECTS_PER_SEAT = 100;
export const MIN_SEATS = 1;
export const MAX_SEATS = 10;

/** Whether the request reads a collection (a list, a watch asking for its initial events): only those take more than a seat. */
export function needsEstimate(request: FlowControlRequest): boolean {
  return request.name === '' && (request.verb === 'list' || (request.verb === 'watch' && request.query.sendInitialEvents === 'true'));
}

/**
 * The seats a request takes while it runs. A list reads its whole collection (Skiff's store has no watch cache to
 * answer from): twice what it returns without selectors, what is stored plus what it returns with them — the
 * counts Kubernetes uses for lists served from etcd. A watch that asks for its initial events reads everything
 * once. Everything else, and a list of one name, takes one seat.
 */
export async function estimateSeats(request: FlowControlRequest, maxSeats: number): Promise<number> {
  if (!needsEstimate(request)) return MIN_SEATS;
  const initialEvents = request.verb === 'watch';
  const stored = await request.objectCount();
  if (stored === undefined) return MIN_SEATS;
  const limit = Number(request.query.limit);
  const returned = Number.isInteger(limit) && limit > 0 && limit < stored ? limit : stored;
  const selected = Boolean(request.query.labelSelector || request.query.fieldSelector);
  const objects = initialEvents ? stored : selected ? stored + returned : 2 * returned;
  return Math.min(Math.max(Math.ceil(objects / OBJECTS_PER_SEAT), MIN_SEATS), maxSeats);
}
