/** One change a mutating admission tap made, as a JSON Patch operation names it. */
export interface DiffOp {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: unknown;
}

const REDACTED = '<redacted>';

function pointer(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The changes from `before` to `after` as JSON Patch operations, at most `limit` of them (arrays that differ in
 * length are replaced whole). Values under a Secret's data are redacted.
 */
export function jsonDiff(before: unknown, after: unknown, limit = 50): { ops: DiffOp[]; truncated: boolean } {
  const ops: DiffOp[] = [];
  let truncated = false;
  const secret = isObject(after) && after.kind === 'Secret';
  const push = (op: DiffOp) => {
    if (ops.length >= limit) {
      truncated = true;
      return;
    }
    if (secret && op.value !== undefined && /^\/(data|stringData)(\/|$)/.test(op.path)) op.value = REDACTED;
    ops.push(op);
  };
  const walk = (a: unknown, b: unknown, path: string) => {
    if (a === b || truncated) return;
    if (isObject(a) && isObject(b)) {
      for (const key of Object.keys(a)) if (!(key in b)) push({ op: 'remove', path: pointer(path, key) });
      for (const [key, value] of Object.entries(b)) {
        if (!(key in a)) push({ op: 'add', path: pointer(path, key), value });
        else walk(a[key], value, pointer(path, key));
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      for (let i = 0; i < a.length; i++) walk(a[i], b[i], pointer(path, i));
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) push({ op: 'replace', path: path || '/', value: b });
  };
  walk(before, after, '');
  return { ops, truncated };
}

/** A one-line summary: `+/metadata/labels/app=web ~/spec/x -/y`, cut to fit a span attribute. */
export function summarizeDiff(ops: readonly DiffOp[], truncated: boolean): string {
  const parts = ops.map((op) => {
    const sign = op.op === 'add' ? '+' : op.op === 'remove' ? '-' : '~';
    if (op.value === undefined) return `${sign}${op.path}`;
    const value = typeof op.value === 'string' ? op.value : JSON.stringify(op.value);
    return `${sign}${op.path}=${value.length > 40 ? `${value.slice(0, 39)}…` : value}`;
  });
  return parts.join(' ') + (truncated ? ' …' : '');
}
