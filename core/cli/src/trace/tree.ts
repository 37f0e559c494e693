import type { Span } from '@skiff/kernel';

/** A span with its children, in start order, and the time it spent outside them. */
export interface SpanNode {
  span: Span;
  depth: number;
  children: SpanNode[];
  /** Duration minus the union of the children's intervals (clipped to this span): what this step itself took. */
  self: number;
}

/** The length of the union of `intervals` clipped to [from, to]. */
export function coveredLength(intervals: readonly [number, number][], from: number, to: number): number {
  const clipped = intervals
    .map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  let start = -Infinity;
  for (const [a, b] of clipped) {
    if (a > end) {
      if (end > start) total += end - start;
      start = a;
      end = b;
    } else if (b > end) end = b;
  }
  if (end > start) total += end - start;
  return total;
}

/**
 * Spans as trees: a span whose parent is not among them is a root (another process recorded the parent, or it
 * was dropped from the ring). Roots and children in start order.
 */
export function buildTree(spans: readonly Span[]): SpanNode[] {
  const nodes = new Map<string, SpanNode>();
  for (const span of spans) nodes.set(`${span.trace}/${span.id}`, { span, depth: 0, children: [], self: 0 });
  const roots: SpanNode[] = [];
  for (const node of nodes.values()) {
    const parent = node.span.parent === undefined ? undefined : nodes.get(`${node.span.trace}/${node.span.parent}`);
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  const byStart = (a: SpanNode, b: SpanNode) => a.span.start - b.span.start;
  const finish = (node: SpanNode, depth: number) => {
    node.depth = depth;
    node.children.sort(byStart);
    for (const child of node.children) finish(child, depth + 1);
    const { start, end } = node.span;
    node.self = Math.max(
      0,
      end -
        start -
        coveredLength(
          node.children.map((c) => [c.span.start, c.span.end]),
          start,
          end,
        ),
    );
  };
  roots.sort(byStart);
  for (const root of roots) finish(root, 0);
  return roots;
}

/** Every node of the trees, depth first, in start order. */
export function flatten(roots: readonly SpanNode[]): SpanNode[] {
  const out: SpanNode[] = [];
  const walk = (node: SpanNode) => {
    out.push(node);
    for (const child of node.children) walk(child);
  };
  for (const root of roots) walk(root);
  return out;
}

/** What a row says about its span: the step, who did it, and the few attributes worth a glance. */
export function describeSpan(span: Span): { label: string; detail: string } {
  const who = span.plugin && span.plugin !== span.name ? ` · ${span.plugin}` : '';
  const label = span.hook ? `${span.hook} ${span.name}${who}` : `${span.name}${who}`;
  const attrs = span.attrs ?? {};
  const parts: string[] = [];
  for (const key of ['result', 'reason', 'code', 'kind', 'namespace', 'name', 'resourceVersion', 'revision', 'node', 'pod', 'image', 'watcher', 'diff']) {
    const value = attrs[key];
    if (value !== undefined && value !== '') parts.push(`${key}=${value}`);
  }
  if (span.error) parts.push(`error=${span.error}`);
  return { label, detail: parts.join(' ') };
}

export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)}s`;
  if (ms >= 10) return `${ms.toFixed(1)}ms`;
  return `${ms.toFixed(2)}ms`;
}
