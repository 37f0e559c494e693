import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import * as hookModule from './hooks.js';
import { createHooks } from './hooks.js';
import { codeSpans, productionSources, readDoc, tableUnder, walk } from './test-support/workspace.js';

/**
 * docs/hooks.md is written by hand and checked here against the code: the hooks of `createHooks()`, the
 * exported `*_STAGE` constants and the `Components` interface (with what other packages add to it).
 * A hook, stage or component missing from the page fails, and so does one the page names that is gone.
 */
const page = readDoc('hooks.md');
const sources = productionSources();

const hooks = createHooks();
const hookNames = Object.keys(hooks).sort();

interface Declaration {
  kind: string;
  args: string[];
  returns?: string;
}

/** The `new Kind<[Args], Result>([...])` of every hook, as written in hooks.ts. */
function declarations(): Map<string, Declaration> {
  const file = sources.find((source) => source.path === 'core/kernel/src/hooks.ts')!.file;
  const found = new Map<string, Declaration>();
  walk(file, (node) => {
    if (!ts.isPropertyAssignment(node) || !ts.isNewExpression(node.initializer)) return;
    const [args, result] = node.initializer.typeArguments ?? [];
    if (!args || !ts.isTupleTypeNode(args)) return;
    found.set(node.name.getText(), {
      kind: node.initializer.expression.getText(),
      args: args.elements.map((element) => element.getText()),
      returns: result?.getText(),
    });
  });
  return found;
}

const TAP_METHODS = new Set(['tap', 'tapPromise', 'tapAsync']);
const CALL_METHODS = new Set(['call', 'promise', 'callAsync']);

/**
 * Which packages call and which tap each hook in production code: `….hooks.<name>.call(…)` (or the hook
 * handed on as a value, as the admission step does) and `….hooks.<name>.tap(…)`.
 */
function hookUse(): { callers: Map<string, Set<string>>; tappers: Map<string, Set<string>> } {
  const callers = new Map<string, Set<string>>(hookNames.map((name) => [name, new Set()]));
  const tappers = new Map<string, Set<string>>(hookNames.map((name) => [name, new Set()]));
  for (const { file, packageName } of sources) {
    walk(file, (node) => {
      if (!ts.isPropertyAccessExpression(node) || !callers.has(node.name.text)) return;
      const owner = node.expression;
      const onHooks = (ts.isPropertyAccessExpression(owner) ? owner.name.text : ts.isIdentifier(owner) ? owner.text : '') === 'hooks';
      if (!onHooks) return;
      const member = ts.isPropertyAccessExpression(node.parent) && node.parent.expression === node ? node.parent.name.text : undefined;
      if (member !== undefined && TAP_METHODS.has(member)) tappers.get(node.name.text)!.add(packageName);
      else if (member === undefined || CALL_METHODS.has(member)) callers.get(node.name.text)!.add(packageName);
    });
  }
  return { callers, tappers };
}

/** The members of `interface Components`, in the kernel and wherever a package adds to it. */
function componentDeclarations(): Map<string, string> {
  const declared = new Map<string, string>();
  for (const { file, packageName } of sources) {
    walk(file, (node) => {
      if (!ts.isInterfaceDeclaration(node) || node.name.text !== 'Components') return;
      for (const member of node.members) if (member.name) declared.set(member.name.getText(), packageName);
    });
  }
  return declared;
}

/** Who registers each component: `kernel.provide('name', …)`, or the kernel's own `container.register({ name })`. */
function componentProviders(): Map<string, Set<string>> {
  const providers = new Map<string, Set<string>>();
  const add = (name: string, packageName: string) => providers.set(name, (providers.get(name) ?? new Set()).add(packageName));
  for (const { file, packageName } of sources) {
    walk(file, (node) => {
      if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return;
      const [first] = node.arguments;
      const method = node.expression.name.text;
      if (method === 'provide' && first && ts.isStringLiteral(first)) add(first.text, packageName);
      if (method === 'register' && /container$/i.test(node.expression.expression.getText()) && first && ts.isObjectLiteralExpression(first))
        for (const property of first.properties) if (property.name) add(property.name.getText(), packageName);
    });
  }
  return providers;
}

const { callers, tappers } = hookUse();

/** The package names in a cell (`@skiff/…` code spans; `@skiff/plugin-controller-*` stands for several). */
const packagesIn = (cell: string) => codeSpans(cell).filter((span) => span.startsWith('@skiff/'));

const rowsByName = (heading: string) => {
  const rows = tableUnder(page, heading);
  return new Map(rows.map((cells) => [codeSpans(cells[0] ?? '')[0] ?? cells[0] ?? '', cells]));
};

describe('docs/hooks.md', () => {
  describe('## Hooks', () => {
    const rows = rowsByName('## Hooks');
    const declared = declarations();

    it('has one row per hook of createHooks(), and none for a hook that is gone', () => {
      expect([...rows.keys()].sort(), 'the hooks in the table').toEqual(hookNames);
      expect([...declared.keys()].sort(), 'the hooks hooks.ts declares (as the test reads it)').toEqual(hookNames);
    });

    it.each(hookNames)('%s: owner, tapable kind, arguments and what a tap returns match hooks.ts', (name) => {
      const [, owner = '', kind = '', receives = '', returns = '', builtIn = ''] = rows.get(name) ?? [];
      const declaration = declared.get(name)!;

      expect(hooks[name as keyof typeof hooks].constructor.name, 'the runtime kind is the declared one').toBe(declaration.kind);
      expect(codeSpans(kind), 'tapable kind').toEqual([declaration.kind]);

      const callerNames = [...callers.get(name)!].sort();
      expect(callerNames, `a hook no component calls is dead: remove ${name} from hooks.ts`).not.toEqual([]);
      expect(packagesIn(owner).sort(), 'owner: the packages that call it').toEqual(callerNames);

      if (declaration.args.length) expect(codeSpans(receives), 'a tap receives (the types in hooks.ts)').toEqual(declaration.args);
      else expect(receives, 'a tap receives nothing').toMatch(/^—/);

      const result = declaration.kind === 'SyncWaterfallHook' ? declaration.args[0] : declaration.kind.includes('Bail') ? declaration.returns : undefined;
      if (result) expect(codeSpans(returns)[0], 'a tap returns (the type in hooks.ts)').toBe(result);
      else expect(returns, 'a tap returns nothing').toMatch(/^—/);

      const tapping = tappers.get(name)!;
      if (tapping.size === 0) expect(builtIn, 'no production code taps it: the built-in taps cell says —').toMatch(/^—/);
      else {
        expect(builtIn, 'production code taps it').not.toMatch(/^—/);
        for (const named of packagesIn(builtIn)) {
          const matches = [...tapping].filter((tapper) => (named.endsWith('*') ? tapper.startsWith(named.slice(0, -1)) : tapper === named));
          expect(matches, `"${named}" is named as a built-in tap of ${name}`).not.toEqual([]);
        }
      }
    });
  });

  it('## Stages lists every exported *_STAGE constant with its value, and nothing else', () => {
    const inSource = Object.entries(hookModule)
      .filter(([name]) => name.endsWith('_STAGE'))
      .flatMap(([name, stages]) => Object.entries(stages as Record<string, number>).map(([key, value]) => [`${name}.${key}`, value] as const))
      .sort(([a], [b]) => a.localeCompare(b));
    const onPage = tableUnder(page, '## Stages')
      .map(([constant = '', value = '']) => [codeSpans(constant)[0] ?? constant, Number(value)] as const)
      .sort(([a], [b]) => a.localeCompare(b));
    expect(onPage).toEqual(inSource);
  });

  it('## Components lists every member of Components with the packages that provide it, and nothing else', () => {
    const declared = componentDeclarations();
    const providers = componentProviders();
    const rows = rowsByName('## Components');
    expect([...rows.keys()].sort(), 'the components in the table').toEqual([...declared.keys()].sort());
    for (const [name, cells] of rows) {
      const named = packagesIn(cells[1] ?? '');
      expect(named.sort(), `who provides ${name}`).toEqual([...(providers.get(name) ?? [])].sort());
    }
  });
});
