/** W3C trace context (version 00): `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export interface TraceParent {
  trace: string;
  span: string;
}

/** The ids a traceparent header carries, or undefined when it is absent or malformed (then it is ignored, as the spec says). */
export function parseTraceParent(header: string | string[] | undefined): TraceParent | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (!match || match[1] === ZERO_TRACE || match[2] === ZERO_SPAN) return undefined;
  return { trace: match[1]!, span: match[2]! };
}

/** The header value naming `span` of `trace` as the parent, sampled. */
export function formatTraceParent(trace: string, span: string): string {
  return `00-${trace}-${span}-01`;
}
