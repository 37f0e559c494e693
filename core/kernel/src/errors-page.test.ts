import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { codeSpans, productionSources, readDoc, walk } from './test-support/workspace.js';

/**
 * docs/errors.md lists every SKIFF_ERR_* code of every package, under the package whose errors.ts table
 * defines it. Checked here against the sources: a code missing from the page, listed under the wrong
 * package, or listed but gone from the code fails.
 */
const CODE = /^SKIFF_ERR_[A-Z0-9]+(?:_[A-Z0-9]+)*$/;

/** Each code's package, from the keys of every errors.ts table; and every code the sources name in a string. */
function codesInSource(): { defined: Map<string, Set<string>>; named: Map<string, string> } {
  const defined = new Map<string, Set<string>>();
  const named = new Map<string, string>();
  for (const { file, path, packageName } of productionSources()) {
    const isTable = basename(path) === 'errors.ts';
    walk(file, (node) => {
      if (isTable && ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) && CODE.test(node.name.text))
        defined.set(node.name.text, (defined.get(node.name.text) ?? new Set()).add(packageName));
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && CODE.test(node.text) && !named.has(node.text)) named.set(node.text, path);
    });
  }
  return { defined, named };
}

/** The codes on the page, each with the package of the `## \`@skiff/…\`` section it is listed under. */
function codesOnPage(markdown: string): Array<{ code: string; packageName: string }> {
  const listed: Array<{ code: string; packageName: string }> = [];
  let packageName = '';
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) packageName = codeSpans(line)[0] ?? '';
    const first = line.startsWith('|') ? codeSpans(line.split('|')[1] ?? '')[0] : undefined;
    if (first && CODE.test(first)) listed.push({ code: first, packageName });
  }
  return listed;
}

describe('docs/errors.md', () => {
  const { defined, named } = codesInSource();
  const listed = codesOnPage(readDoc('errors.md'));

  it('finds the error tables', () => {
    expect(defined.size).toBeGreaterThan(100);
  });

  it('each code is defined by one package', () => {
    const shared = [...defined].filter(([, packages]) => packages.size > 1).map(([code, packages]) => `${code}: ${[...packages].join(', ')}`);
    expect(shared).toEqual([]);
  });

  it('each code the sources name is in an errors.ts table', () => {
    const loose = [...named].filter(([code]) => !defined.has(code)).map(([code, path]) => `${code} (${path})`);
    expect(loose).toEqual([]);
  });

  it('lists every code once, under the package that defines it, and no code that is gone', () => {
    const inSource = [...defined].map(([code, packages]) => `${code} ${[...packages][0]}`).sort();
    const onPage = listed.map(({ code, packageName }) => `${code} ${packageName}`).sort();
    expect(onPage).toEqual(inSource);
  });
});
