/** Edit distance (insertions, deletions, substitutions) between two short strings. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `name`, if it is close enough to be what the user meant: within a third
 * of the name's length in edits (at least 2), or containing it / contained in it.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  let best: { candidate: string; score: number } | undefined;
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    const contains = Math.min(wanted.length, lower.length) >= 3 && (lower.includes(wanted) || wanted.includes(lower));
    const score = lower === wanted ? 0 : contains ? 0.5 : distance(wanted, lower);
    if (score <= Math.max(2, Math.floor(wanted.length / 3)) && (!best || score < best.score)) best = { candidate, score };
  }
  return best?.candidate;
}

/** ` (did you mean "x"?)` when a near name exists, otherwise the empty string. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const near = nearestName(name, candidates);
  return near ? ` (did you mean "${near}"?)` : '';
}
