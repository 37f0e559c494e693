import { describe, expect, it } from 'vitest';
import { Kernel } from '../kernel.js';
import { waitFor } from '../wait.js';
import { TraceBuffer } from './buffer.js';
import { currentTrace, runInTrace, tracingActive, withSpan } from './context.js';
import { jsonDiff, summarizeDiff } from './diff.js';
import type { Span } from './span.js';
import { formatTraceParent, parseTraceParent } from './traceparent.js';
import { Tracer, TRACE_DEFAULTS } from './tracer.js';

function span(trace: string, id: string, attrs?: Span['attrs']): Span {
  return { trace, id, name: id, kind: 'step', component: 'test', start: 0, end: 1, ...(attrs ? { attrs } : {}) };
}

const user = { username: 'alice', groups: ['system:authenticated'] };

describe('the trace ring', () => {
  it('keeps only the newest spans, oldest first, and counts what it dropped', () => {
    const ring = new TraceBuffer(100);
    for (let i = 0; i < 1000; i++) ring.add(span('t', String(i)));
    expect(ring.size).toBe(100);
    expect(ring.dropped).toBe(900);
    const ids = [...ring.spans()].map((s) => s.id);
    expect(ids[0]).toBe('900');
    expect(ids.at(-1)).toBe('999');
  });

  it('follows owner references from an object to what it owns, and returns the traces that touched them', () => {
    const ring = new TraceBuffer(10);
    ring.add(span('t1', 'a', { uid: 'deploy' }));
    ring.add(span('t2', 'b', { uid: 'rs', owners: 'deploy' }));
    ring.add(span('t3', 'c', { uid: 'pod', owners: 'other,rs' }));
    ring.add(span('t4', 'd', { uid: 'unrelated' }));
    const { traces, uids } = ring.tracesOfObjects(['deploy']);
    expect([...uids].sort()).toEqual(['deploy', 'pod', 'rs']);
    expect([...traces].sort()).toEqual(['t1', 't2', 't3']);
  });
});

describe('traceparent', () => {
  it('round-trips and ignores malformed or all-zero values', () => {
    const header = formatTraceParent('a'.repeat(32), 'b'.repeat(16));
    expect(parseTraceParent(header)).toEqual({ trace: 'a'.repeat(32), span: 'b'.repeat(16) });
    expect(parseTraceParent(['  ' + header.toUpperCase()])).toEqual({ trace: 'a'.repeat(32), span: 'b'.repeat(16) });
    for (const bad of [undefined, '', '01-' + header.slice(3), `00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`, `00-${'a'.repeat(31)}-${'b'.repeat(16)}-01`])
      expect(parseTraceParent(bad)).toBeUndefined();
  });
});

describe('the JSON diff of a mutation', () => {
  it('names adds, removes and replacements by JSON pointer and redacts Secret data', () => {
    const { ops } = jsonDiff(
      { metadata: { name: 'x', labels: { 'a/b': '1' } }, spec: [1, 2] },
      { metadata: { name: 'x', annotations: { k: 'v' } }, spec: [1, 3] },
    );
    expect(ops).toEqual([
      { op: 'remove', path: '/metadata/labels' },
      { op: 'add', path: '/metadata/annotations', value: { k: 'v' } },
      { op: 'replace', path: '/spec/1', value: 3 },
    ]);
    const secret = jsonDiff({ kind: 'Secret', data: {} }, { kind: 'Secret', data: { token: 'c2VjcmV0' } });
    expect(secret.ops).toEqual([{ op: 'add', path: '/data/token', value: '<redacted>' }]);
    const many = jsonDiff({}, Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i])));
    expect(many.ops).toHaveLength(50);
    expect(summarizeDiff(many.ops, many.truncated)).toMatch(/^\+\/k0=0 .* …$/);
  });
});

describe('tracing hooks through the kernel', () => {
  it('records nothing and keeps context tracking off while no trace is open', async () => {
    const kernel = new Kernel();
    kernel.hooks.authenticate.tapPromise('authn-test', async () => ({ user }));
    expect(await kernel.hooks.authenticate.promise({} as never)).toEqual({ user });
    expect(tracingActive()).toBe(false);
    expect(currentTrace()).toBeUndefined();
    expect(kernel.tracer.buffer.size).toBe(0);
  });

  it('records each tap of an armed request as a span naming its plugin, what it answered, and a mutation as a diff', async () => {
    const kernel = new Kernel();
    kernel.hooks.authenticate.tapPromise('authn-none', async () => undefined);
    kernel.hooks.authenticate.tapPromise('authn-alice', async () => ({ user }));
    kernel.hooks.authorize.tap('authz-allow', () => ({ decision: 'allow' as const }));
    kernel.hooks.mutate.tapAsync('label-it', (request, callback) => {
      (request.object!.metadata as Record<string, unknown>).labels = { team: 'a' };
      setImmediate(callback);
    });
    kernel.hooks.validate.tapPromise('refuse', async () => {
      throw new Error('no thanks');
    });
    const traceId = kernel.tracer.arm('mutating');
    expect(kernel.tracer.startRequest({ mutating: false, exempt: false }, 'apiserver')).toBeUndefined();
    expect(kernel.tracer.startRequest({ mutating: true, exempt: true }, 'apiserver')).toBeUndefined();
    const root = kernel.tracer.startRequest({ mutating: true, exempt: false }, 'apiserver')!;
    expect(root.trace.id).toBe(traceId);
    const request = { object: { metadata: { name: 'x' } } } as never;
    await runInTrace(root, () =>
      withSpan({ name: 'POST /api/v1/namespaces/default/configmaps', kind: 'request' }, async () => {
        await kernel.hooks.authenticate.promise({} as never);
        await kernel.hooks.authorize.promise({} as never);
        await kernel.hooks.mutate.promise(request);
        await expect(kernel.hooks.validate.promise(request)).rejects.toThrow(/no thanks/);
      }),
    );
    const spans = kernel.tracer.buffer.ofTraces(new Set([traceId]));
    const [requestSpan, ...taps] = spans;
    expect(requestSpan).toMatchObject({ name: 'POST /api/v1/namespaces/default/configmaps', kind: 'request', component: 'apiserver' });
    expect(requestSpan!.parent).toBeUndefined();
    expect(taps.map((s) => [s.hook, s.plugin, s.attrs?.result])).toEqual([
      ['authenticate', 'authn-none', 'no opinion'],
      ['authenticate', 'authn-alice', 'user alice'],
      ['authorize', 'authz-allow', 'allow'],
      ['mutate', 'label-it', '1 change'],
      ['validate', 'refuse', undefined],
    ]);
    expect(taps.every((s) => s.parent === requestSpan!.id && s.start >= requestSpan!.start && s.end <= requestSpan!.end)).toBe(true);
    expect(taps[3]!.attrs?.diff).toBe('+/metadata/labels={"team":"a"}');
    expect(taps[4]!.error).toBe('no thanks');
    kernel.tracer.close();
    expect(tracingActive()).toBe(false);
  });

  it('closes a trace at its span budget; its context then records nothing', async () => {
    const tracer = new Tracer({ ...TRACE_DEFAULTS, maxSpans: 10 });
    tracer.arm('any');
    const root = tracer.startRequest({ mutating: false, exempt: false }, 'test')!;
    await runInTrace(root, async () => {
      for (let i = 0; i < 50; i++) await withSpan({ name: `step ${i}`, kind: 'step' }, async () => undefined);
    });
    expect(tracer.buffer.size).toBe(10);
    expect(tracer.summary(root.trace.id)).toMatchObject({ open: false, spans: 10 });
    expect(tracingActive()).toBe(false);
    expect(runInTrace(root, () => currentTrace())).toBeUndefined();
  });

  it('closes a trace once it went quiet, and the last close switches tracing off', async () => {
    const tracer = new Tracer({ ...TRACE_DEFAULTS, idleSeconds: 1 });
    tracer.arm('any');
    const root = tracer.startRequest({ mutating: false, exempt: false }, 'test')!;
    expect(tracingActive()).toBe(true);
    await waitFor('the quiet trace to close', () => tracer.summary(root.trace.id)?.open === false, { timeoutMs: 5000 });
    expect(tracingActive()).toBe(false);
  });

  it('joins a traceparent only of a trace open here, unless mode is on', () => {
    const off = new Tracer();
    const foreign = formatTraceParent('c'.repeat(32), 'd'.repeat(16));
    expect(off.startRequest({ traceparent: foreign, mutating: true, exempt: false }, 'apiserver')).toBeUndefined();
    const on = new Tracer({ ...TRACE_DEFAULTS, mode: 'on' });
    const joined = on.startRequest({ traceparent: foreign, mutating: false, exempt: false }, 'apiserver')!;
    expect(joined).toMatchObject({ span: 'd'.repeat(16), trace: { id: 'c'.repeat(32) } });
    expect(on.join(foreign, 'scheduler')?.trace).toBe(joined.trace);
    on.close();
    expect(on.startRequest({ traceparent: foreign, mutating: false, exempt: false }, 'apiserver')).toBeUndefined();
  });
});
