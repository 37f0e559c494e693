import { parseCpuMillis, type Quantity, type Toleration } from '@skiff/api';

/**
 * Whether two resource lists hold the same amounts (`10m` and `0.01` agree); a missing list and an empty one are
 * the same, as Kubernetes compares them.
 */
export function sameResources(a: Record<string, Quantity> | undefined, b: Record<string, Quantity> | undefined): boolean {
  const left = Object.entries(a ?? {});
  const right = b ?? {};
  if (left.length !== Object.keys(right).length) return false;
  return left.every(([name, amount]) => right[name] !== undefined && sameAmount(amount, right[name]));
}

function sameAmount(a: Quantity, b: Quantity): boolean {
  try {
    return parseCpuMillis(a) === parseCpuMillis(b);
  } catch {
    return String(a) === String(b);
  }
}

/** The pod's node selector with the RuntimeClass's added, or the key whose values disagree. */
export function mergeNodeSelector(
  pod: Record<string, string> | undefined,
  runtimeClass: Record<string, string> | undefined,
): { merged: Record<string, string> | undefined } | { conflict: { key: string; classValue: string; podValue: string } } {
  if (!pod) return { merged: runtimeClass ? { ...runtimeClass } : undefined };
  const merged = { ...pod };
  for (const [key, classValue] of Object.entries(runtimeClass ?? {})) {
    const podValue = merged[key];
    if (podValue !== undefined && podValue !== classValue) return { conflict: { key, classValue, podValue } };
    merged[key] = classValue;
  }
  return { merged };
}

/**
 * The pod's tolerations followed by the RuntimeClass's, leaving out each one that another tolerates at least as
 * much as (the first of two equal ones stays), as kube-apiserver merges them.
 */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((toleration, i) => {
    if (merged.some((kept) => isSuperset(kept, toleration))) return;
    if (all.slice(i + 1).some((later) => !sameToleration(toleration, later) && isSuperset(later, toleration))) return;
    merged.push(toleration);
  });
  return merged;
}

const EQUAL = 'Equal';
const EXISTS = 'Exists';

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? '') === (b.operator ?? '') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.tolerationSeconds ?? undefined) === (b.tolerationSeconds ?? undefined)
  );
}

/** Whether `wider` tolerates every taint `narrower` does, for at least as long. */
export function isSuperset(wider: Toleration, narrower: Toleration): boolean {
  if (sameToleration(wider, narrower)) return true;
  const widerKey = wider.key ?? '';
  // An empty key with Exists matches every key.
  if ((narrower.key ?? '') !== widerKey && (widerKey !== '' || wider.operator !== EXISTS)) return false;
  // An empty effect matches every effect.
  if ((narrower.effect ?? '') !== (wider.effect ?? '') && (wider.effect ?? '') !== '') return false;
  if (wider.effect === 'NoExecute' && wider.tolerationSeconds != null) {
    if (narrower.tolerationSeconds == null || narrower.tolerationSeconds > wider.tolerationSeconds) return false;
  }
  switch (wider.operator ?? '') {
    case EQUAL:
    case '':
      return narrower.operator === EQUAL && (narrower.value ?? '') === (wider.value ?? '');
    case EXISTS:
      return true;
    default:
      return false;
  }
}
