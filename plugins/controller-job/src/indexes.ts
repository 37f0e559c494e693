/**
 * Completion indexes as Kubernetes writes them in `status.completedIndexes`: increasing intervals,
 * `first-last` or a single number, separated by commas ("0-2,4,7-9").
 */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j += 1;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The indexes below `completions` that a `completedIndexes` string names; anything unreadable is skipped. */
export function parseIndexes(text: string | undefined, completions: number): Set<number> {
  const indexes = new Set<number>();
  for (const interval of (text ?? '').split(',')) {
    const match = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(interval);
    if (!match) continue;
    const first = Number(match[1]);
    const last = Math.min(match[2] === undefined ? first : Number(match[2]), completions - 1);
    for (let index = first; index <= last; index++) indexes.add(index);
  }
  return indexes;
}

/** The completion index a pod carries in its annotation (or label), if it is a whole number. */
export function completionIndexOf(
  annotations: Record<string, string> | undefined,
  labels?: Record<string, string>,
  key = 'batch.kubernetes.io/job-completion-index',
): number | undefined {
  const value = annotations?.[key] ?? labels?.[key];
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}
