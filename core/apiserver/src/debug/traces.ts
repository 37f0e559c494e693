import { errors } from '@skiff/api';
import { spanClock, type ApiRequest, type Span, type Tracer } from '@skiff/kernel';
import type { ApiExtensions } from '../extensions.js';

/** Where `skiff trace` reads and arms traces: a non-resource path, so authorization decides who may (docs/tracing.md). */
export const TRACES_PATH = '/debug/skiff/traces';

const JSON_HEADERS = { 'content-type': 'application/json' };

function bodyOf(request: ApiRequest): Record<string, unknown> {
  const { body } = request;
  if (body === undefined || body === null || body === '') return {};
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    try {
      const parsed: unknown = JSON.parse(body.toString());
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // answered below
    }
    throw errors.badRequest(`${TRACES_PATH} takes a JSON object such as {"next":"mutating"}`);
  }
  return body as Record<string, unknown>;
}

/** The roots of the traces held: one line each for `skiff trace --list`. */
function roots(spans: Iterable<Span>): { trace: string; name: string; start: number; end: number; attrs?: Span['attrs'] }[] {
  const found = new Map<string, Span>();
  for (const span of spans) if (span.parent === undefined && !found.has(span.trace)) found.set(span.trace, span);
  return [...found.values()].map(({ trace, name, start, end, attrs }) => ({ trace, name, start, end, ...(attrs ? { attrs } : {}) }));
}

/**
 * GET: `?status` the tracer's state; `?id=<trace>` one trace's spans and whether it is still open; `?uid=<uid>[,…]`
 * the traces that touched those objects or what they own; nothing: the roots of every trace held.
 * POST `{"next":"mutating"|"any"}` arms a trace for the next such request and answers its id.
 * DELETE `?id=<trace>` disarms a trace no request has matched yet.
 */
export function serveTraces(extensions: ApiExtensions, tracer: Tracer): void {
  extensions.route({
    method: 'GET',
    path: TRACES_PATH,
    async handler(request) {
      const { id, uid } = request.query;
      const clock = spanClock();
      if (request.query.status !== undefined) return { status: 200, headers: JSON_HEADERS, body: { ...{}, ...tracer.status(), now: clock } };
      if (id) {
        const summary = tracer.summary(id);
        if (!summary) throw errors.notFound('traces', '', id);
        const waiting = tracer.isWaiting(id);
        return { status: 200, headers: JSON_HEADERS, body: { ...{}, ...summary, waiting, now: clock, spans: tracer.buffer.ofTraces(new Set([id])) } };
      }
      if (uid) {
        const { traces, uids } = tracer.buffer.tracesOfObjects(uid.split(','));
        return { status: 200, headers: JSON_HEADERS, body: { traces: [...traces], uids: [...uids], now: clock, spans: tracer.buffer.ofTraces(traces) } };
      }
      return { status: 200, headers: JSON_HEADERS, body: { traces: roots(tracer.buffer.spans()), now: clock } };
    },
  });
  extensions.route({
    method: 'POST',
    path: TRACES_PATH,
    async handler(request) {
      const { next } = bodyOf(request);
      if (next !== 'mutating' && next !== 'any') throw errors.badRequest(`"next" must be "mutating" or "any" (got ${JSON.stringify(next)})`);
      return { status: 201, headers: JSON_HEADERS, body: { id: tracer.arm(next) } };
    },
  });
  extensions.route({
    method: 'DELETE',
    path: TRACES_PATH,
    async handler(request) {
      if (request.query.id) tracer.disarm(request.query.id);
      return { status: 200, headers: JSON_HEADERS, body: {} };
    },
  });
}
