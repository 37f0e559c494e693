import { isKubeObject } from '@skiff/api';
import {
  runInTrace,
  spanAttribute,
  tracingActive,
  withSpan,
  type ApiRequest,
  type ApiResponse,
  type LiveSpan,
  type SpanKind,
  type Tracer,
} from '@skiff/kernel';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The trace endpoint's own requests are never the "next request" a `skiff trace --next` waits for. */
const TRACE_PATH = '/debug/skiff/';
const LOOPBACK_TOKEN = 'bearer skiff-loopback.';

/**
 * Runs `serve` as the root (or a continued) span of a trace when the tracer wants this request: it carries the
 * traceparent of an open trace, or an armed `skiff trace --next` waits for it, or tracing is on. Otherwise it
 * just calls `serve`.
 */
export function traceRequest(tracer: Tracer | undefined, request: ApiRequest, serve: () => Promise<ApiResponse>): Promise<ApiResponse> {
  if (tracer === undefined || !tracer.mayTrace(request.headers.traceparent !== undefined)) return serve();
  const exempt = request.path.startsWith(TRACE_PATH) || request.headers.authorization?.slice(0, LOOPBACK_TOKEN.length).toLowerCase() === LOOPBACK_TOKEN;
  const ctx = tracer.startRequest({ traceparent: request.headers.traceparent, mutating: MUTATING.has(request.method), exempt }, 'apiserver');
  if (ctx === undefined) return serve();
  const name = `${request.method} ${request.path}`;
  return runInTrace(ctx, () =>
    withSpan({ name: spanAttribute(name), kind: 'request', attrs: queryAttrs(request) }, async (span) => {
      const response = await serve();
      describeResponse(span!, response);
      return response;
    }),
  );
}

function queryAttrs(request: ApiRequest): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const key of ['labelSelector', 'fieldSelector', 'watch', 'dryRun', 'fieldManager'] as const) {
    const value = request.query[key];
    if (value) attrs[key] = spanAttribute(value);
  }
  const agent = request.headers['user-agent'];
  if (agent) attrs.userAgent = spanAttribute(agent);
  return attrs;
}

/** The answer's code and, for an object, what links spans to it: kind, name, uid, owners, revision. */
function describeResponse(span: LiveSpan, response: ApiResponse): void {
  const { attrs } = span;
  attrs.code = response.status;
  const body = response.body;
  if (!isKubeObject(body)) return;
  const { metadata } = body;
  attrs.kind = body.kind ?? '';
  if (metadata.namespace) attrs.namespace = metadata.namespace;
  if (metadata.name) attrs.name = metadata.name;
  if (metadata.uid) attrs.uid = metadata.uid;
  if (metadata.resourceVersion) attrs.resourceVersion = metadata.resourceVersion;
  const owners = metadata.ownerReferences?.map((owner) => owner.uid).join(',');
  if (owners) attrs.owners = owners;
}

/** A named step of the request path, a span while traced; otherwise just `run`. */
export function step<T>(name: string, run: () => Promise<T>, kind: SpanKind = 'step'): Promise<T> {
  return tracingActive() ? withSpan({ name, kind }, run) : run();
}
