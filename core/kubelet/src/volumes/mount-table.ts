import { readFile } from 'node:fs/promises';
import { sep } from 'node:path';

/** `\040` and friends in /proc mount tables stand for the octal character code. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * Mount points at or under `dir` in this process's mount namespace (none where there is no /proc). A pod
 * folder with one of these must not be removed: it would empty a tmpfs, or worse, a bind-mounted host path.
 */
export async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return table
    .split('\n')
    .filter(Boolean)
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((point) => point === dir || point.startsWith(dir + sep));
}
