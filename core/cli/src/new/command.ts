import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Output } from '../up.js';
import { PLUGIN_KINDS, pluginKind } from './kinds.js';
import { pluginNames } from './names.js';
import { cliPackage } from './package-root.js';
import { scaffoldFiles, type ScaffoldFile } from './scaffold.js';

/**
 * `skiff new <kind> <name> [--dir DIR]`: writes skiff-plugin-<name>/ under DIR, a package that installs,
 * builds and passes its tests on its own. Wrong input throws an Error whose message is the one line to show.
 */
export function newPlugin(argv: string[], output: Output, cwd = process.cwd()): void {
  const { values, positionals } = parseArgs({ args: argv, options: { dir: { type: 'string', short: 'd' } }, allowPositionals: true, strict: true });
  const [kindWord, nameWord, extra] = positionals;
  const kinds = Object.keys(PLUGIN_KINDS).join(', ');
  if (kindWord === undefined) throw new Error(`missing the plugin kind and name: skiff new <kind> <name> (kinds: ${kinds})`);
  const kind = pluginKind(kindWord);
  if (nameWord === undefined) throw new Error(`missing the plugin name: skiff new ${kind} <name>`);
  if (extra !== undefined) throw new Error(`unexpected argument "${extra}"`);
  const names = pluginNames(nameWord);

  const target = resolve(cwd, values.dir ?? '.', names.folder);
  const shown = relative(cwd, target) || '.';
  refuseToOverwrite(target, shown);
  const { root, version } = cliPackage();
  writeFiles(target, scaffoldFiles({ kind, names, skiffVersion: version, templatesDir: join(root, 'templates') }));

  output.out(`created ${shown}/: ${names.packageName}, ${article(kind)} ${kind} plugin for Skiff ${version}`);
  output.out('next:');
  output.out(`  cd ${shown}`);
  output.out('  npm install');
  output.out('  npm test');
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

/** An empty folder may be reused; anything else there is the user's and stays untouched. */
function refuseToOverwrite(target: string, shown: string): void {
  let stats;
  try {
    stats = statSync(target);
  } catch {
    return;
  }
  if (!stats.isDirectory()) throw new Error(`${shown} already exists and is not a folder; choose another name or --dir`);
  if (readdirSync(target).length > 0) throw new Error(`${shown} already exists and is not empty; choose another name or --dir`);
}

function writeFiles(target: string, files: ScaffoldFile[]): void {
  for (const { path, content } of files) {
    const file = join(target, path);
    mkdirSync(dirname(file), { recursive: true });
    // `wx`: never replace a file, even one that appeared since the check above.
    writeFileSync(file, content, { flag: 'wx' });
  }
}
