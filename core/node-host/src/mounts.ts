import { readFile } from 'node:fs/promises';
import { sep } from 'node:path';

/** `\040` and friends in /proc mount tables stand for the octal character code. */
function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Mount points of this process's mount namespace (none where there is no /proc, as on macOS). */
export async function mountPoints(): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return table
    .split('\n')
    .filter(Boolean)
    .map((line) => unescapeMountPath(line.split(' ')[4] ?? ''));
}

/** Mount points at or under `dir`, deepest first (the order to unmount them in). */
export async function mountsUnder(dir: string): Promise<string[]> {
  return (await mountPoints()).filter((point) => point === dir || point.startsWith(dir + sep)).sort((a, b) => b.length - a.length);
}
