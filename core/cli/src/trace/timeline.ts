import type { Span } from '@skiff/kernel';
import { buildTree, describeSpan, flatten, formatMs } from './tree.js';

export interface TimelineOptions {
  /** Terminal columns (default 120). */
  width?: number;
  /** ANSI colours (a TTY). */
  color?: boolean;
}

const COMPONENT_COLOR: Record<string, string> = {
  apiserver: '\x1b[36m',
  'controller-manager': '\x1b[35m',
  scheduler: '\x1b[33m',
};
const KUBELET_COLOR = '\x1b[32m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/**
 * A trace as terminal rows, one per span in tree order: offset from the first span's start, duration, the time
 * the step spent outside its children ("self"; a parent's duration is its self plus the union of its children),
 * a bar placing it on the whole timeline, and what it was.
 */
export function renderTimeline(spans: readonly Span[], options: TimelineOptions = {}): string {
  if (spans.length === 0) return '(no spans)';
  const rows = flatten(buildTree(spans));
  const origin = Math.min(...spans.map((s) => s.start));
  const total = Math.max(...spans.map((s) => s.end)) - origin || 1;
  const barWidth = Math.max(10, Math.min(40, Math.floor((options.width ?? 120) / 4)));
  const color = options.color === true;
  const lines = [`${'offset'.padStart(9)} ${'duration'.padStart(9)} ${'self'.padStart(9)}  ${'timeline'.padEnd(barWidth)}  step`];
  for (const { span, depth, self } of rows) {
    const from = Math.floor(((span.start - origin) / total) * barWidth);
    const to = Math.max(from + 1, Math.ceil(((span.end - origin) / total) * barWidth));
    const bar = ' '.repeat(from) + '█'.repeat(Math.min(to, barWidth) - from);
    const { label, detail } = describeSpan(span);
    const component = span.component.startsWith('kubelet') ? span.component : span.component;
    const tint = color ? (COMPONENT_COLOR[span.component] ?? (span.component.startsWith('kubelet') ? KUBELET_COLOR : '')) : '';
    const text = `${'  '.repeat(depth)}${label}${detail ? `  ${color ? DIM : ''}${detail}${color ? RESET : ''}` : ''}`;
    lines.push(
      `${('+' + formatMs(span.start - origin)).padStart(9)} ${formatMs(span.end - span.start).padStart(9)} ${formatMs(self).padStart(9)}  ${tint}${bar.padEnd(barWidth)}${color ? RESET : ''}  ${tint}[${component}]${color ? RESET : ''} ${text}`,
    );
  }
  return lines.join('\n');
}
