// The downward API: a pod's own metadata and a container's resources as text, the way the kubelet hands them
// to environment variables (fieldRef, resourceFieldRef) and to downwardAPI / projected volume files.
import { parseBytes, parseCpuMillis } from './quantity.js';
import type { Container, ObjectMeta, ResourceFieldSelector, ResourceList } from './types.js';

const SUBSCRIPTED = /^metadata\.(labels|annotations)\['(.*)'\]$/;

const GO_ESCAPES: Readonly<Record<string, string>> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

/** A string in Go's `%q` form: double quotes, backslash escapes for quotes, backslashes and control characters. */
export function goQuote(value: string): string {
  let quoted = '"';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (char === '"' || char === '\\') quoted += `\\${char}`;
    else if (GO_ESCAPES[char]) quoted += GO_ESCAPES[char];
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${code.toString(16).padStart(2, '0')}`;
    else quoted += char;
  }
  return `${quoted}"`;
}

/** Labels or annotations as the downward API writes them: `key="value"` lines, sorted by key. */
export function formatDownwardMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((key) => `${key}=${goQuote(map![key]!)}`)
    .join('\n');
}

/**
 * The value of a `metadata.*` field path (`metadata.name`, `metadata.labels`, `metadata.annotations['a']`…),
 * or an `unsupported fieldPath` error for anything else.
 */
export function metadataFieldValue(metadata: ObjectMeta, fieldPath: string): string {
  const subscripted = SUBSCRIPTED.exec(fieldPath);
  if (subscripted) {
    const map = subscripted[1] === 'labels' ? metadata.labels : metadata.annotations;
    return map?.[subscripted[2]!] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return metadata.name ?? '';
    case 'metadata.namespace':
      return metadata.namespace ?? '';
    case 'metadata.uid':
      return metadata.uid ?? '';
    case 'metadata.labels':
      return formatDownwardMap(metadata.labels);
    case 'metadata.annotations':
      return formatDownwardMap(metadata.annotations);
    default:
      throw new Error(`unsupported fieldPath: ${fieldPath}`);
  }
}

const LIMITED = ['cpu', 'memory', 'ephemeral-storage'] as const;

/**
 * A container's request or limit as the downward API gives it: rounded up to a whole number of `divisor`s
 * (CPU in millicores, the rest in bytes). An unset limit is the node's allocatable amount, as the kubelet
 * merges it in; an unset request is the limit set on the container, else 0.
 */
export function containerResourceValue(selector: ResourceFieldSelector, container: Container, allocatable: ResourceList = {}): string {
  const [kind, resource] = selector.resource.split(/\.(.*)/s) as [string, string | undefined];
  const known = resource !== undefined && ((LIMITED as readonly string[]).includes(resource) || resource.startsWith('hugepages-'));
  if ((kind !== 'limits' && kind !== 'requests') || !known) throw new Error(`unsupported container resource : ${selector.resource}`);
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  const nodeDefault = (LIMITED as readonly string[]).includes(resource) ? allocatable[resource] : undefined;
  const amount = kind === 'limits' ? (limits[resource] ?? nodeDefault ?? 0) : (requests[resource] ?? limits[resource] ?? 0);
  const divisor = selector.divisor === undefined || selector.divisor === '' || parseCpuMillis(selector.divisor) === 0 ? '1' : selector.divisor;
  const value = resource === 'cpu' ? parseCpuMillis(amount) / parseCpuMillis(divisor) : parseBytes(amount) / parseBytes(divisor);
  return String(Math.ceil(value));
}
