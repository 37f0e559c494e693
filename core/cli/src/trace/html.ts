import type { Span } from '@skiff/kernel';
import { buildTree, describeSpan, flatten, formatMs } from './tree.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const COLORS: Record<string, string> = { apiserver: '#2b8cbe', 'controller-manager': '#8856a7', scheduler: '#e6a100' };

function colorOf(component: string): string {
  return COLORS[component] ?? (component.startsWith('kubelet') ? '#31a354' : '#777');
}

const ROW = 20;
const LABEL = 520;
const WIDTH = 1400;

/**
 * A trace as one self-contained HTML file: an SVG timeline (one `<g class="span">` per span, in tree order, with
 * a tooltip), then a table of every span. No script, no network: a Content-Security-Policy forbids both, and
 * the page is complete as written.
 */
export function renderHtml(spans: readonly Span[], options: { title: string }): string {
  const rows = flatten(buildTree(spans));
  const origin = spans.length ? Math.min(...spans.map((s) => s.start)) : 0;
  const total = (spans.length ? Math.max(...spans.map((s) => s.end)) - origin : 0) || 1;
  const scale = (WIDTH - LABEL - 20) / total;
  const height = rows.length * ROW + 30;
  const svgRows = rows.map(({ span, depth, self }, i) => {
    const { label, detail } = describeSpan(span);
    const x = LABEL + (span.start - origin) * scale;
    const w = Math.max(1, (span.end - span.start) * scale);
    const y = 20 + i * ROW;
    const tip = `${label}\n${span.component} · ${formatMs(span.end - span.start)} (self ${formatMs(self)}) at +${formatMs(span.start - origin)}${detail ? `\n${detail}` : ''}`;
    return (
      `<g class="span" data-kind="${escape(span.kind)}" data-component="${escape(span.component)}" data-id="${escape(span.id)}">` +
      `<title>${escape(tip)}</title>` +
      `<text x="${4 + depth * 12}" y="${y + 14}" class="label">${escape(label.length > 70 ? `${label.slice(0, 69)}…` : label)}</text>` +
      `<rect x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW - 6}" fill="${colorOf(span.component)}"${span.error ? ' stroke="#d7301f" stroke-width="2"' : ''}/>` +
      `<text x="${(x + w + 4).toFixed(1)}" y="${y + 14}" class="time">${escape(formatMs(span.end - span.start))}</text>` +
      `</g>`
    );
  });
  const tableRows = rows.map(({ span, depth, self }) => {
    const { label, detail } = describeSpan(span);
    return `<tr><td>+${escape(formatMs(span.start - origin))}</td><td>${escape(formatMs(span.end - span.start))}</td><td>${escape(formatMs(self))}</td><td>${escape(span.component)}</td><td style="padding-left:${depth * 12}px">${escape(label)}</td><td>${escape(detail)}</td></tr>`;
  });
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${escape(options.title)}</title>
<style>
body { font: 13px system-ui, sans-serif; margin: 16px; color: #222; }
svg text.label { font: 12px ui-monospace, monospace; fill: #222; }
svg text.time { font: 11px ui-monospace, monospace; fill: #555; }
g.span:hover rect { opacity: 0.7; }
table { border-collapse: collapse; margin-top: 16px; font: 12px ui-monospace, monospace; }
td, th { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
.legend span { display: inline-block; margin-right: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
</style>
</head>
<body>
<h1>${escape(options.title)}</h1>
<p>${rows.length} spans over ${escape(formatMs(total))}. <span class="legend">${['apiserver', 'controller-manager', 'scheduler', 'kubelet']
    .map((c) => `<span><i style="background:${colorOf(c)}"></i>${c}</span>`)
    .join('')}</span></p>
<svg width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}">
${svgRows.join('\n')}
</svg>
<table>
<thead><tr><th>offset</th><th>duration</th><th>self</th><th>component</th><th>step</th><th>details</th></tr></thead>
<tbody>
${tableRows.join('\n')}
</tbody>
</table>
</body>
</html>
`;
}
