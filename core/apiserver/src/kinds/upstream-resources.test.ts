import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtinResources } from './index.js';

/** The rows of api-resources-1.36.txt: what upstream 1.36 serves by default. */
function upstreamResources(): string[][] {
  const text = readFileSync(new URL('../../../api/src/generated/api-resources-1.36.txt', import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('#'))
    .map((line) => line.split(' | ').map((cell) => cell.trim()));
}

const list = (values: string[] | undefined) => (values?.length ? values.join(',') : '-');

describe('the built-in kinds', () => {
  it('are the resources upstream 1.36 serves by default, with its names, short names, scope, kinds and categories', () => {
    // kubectl lists each resource once, in its preferred (stored) version; converted versions are served beside it
    // (events.k8s.io's Events, stored as another group's, are a resource of their own).
    const ours = builtinResources()
      .filter((d) => !d.conversion || d.conversion.storage)
      .map((d) => [d.resource, list(d.shortNames), d.group ? `${d.group}/${d.version}` : d.version, String(d.namespaced), d.kind, list(d.categories)]);
    const key = (row: string[]) => `${row[2]} ${row[0]}`;
    const sorted = (rows: string[][]) => [...rows].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sorted(ours)).toEqual(sorted(upstreamResources()));
  });
});
