import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SkiffConfig } from '@skiff/kernel';
import { ensurePrivateDataDir, SERVER_UMASK } from './data-dir.js';
import { privateFileSink, writeExport, type ChunkSink } from './store-export.js';
import { assertEmptyTarget, checkExportFile, importObjects } from './store-import.js';
import { createStoreKernel, openStore } from './store-kernel.js';
import type { Output } from './up.js';
import { CLI_VERSION } from './version.js';

/** A one-shot command logs only what goes wrong unless asked: its own lines say what it did. */
const DEFAULT_LOG_LEVEL = 'warn';

interface StoreArgs {
  configFile?: string;
  overrides: SkiffConfig;
  output?: string;
  file?: string;
}

/** Parses `skiff store export|import` flags; throws an Error whose message is the one line to show. */
export function parseStoreArgs(verb: 'export' | 'import', argv: string[]): StoreArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      preset: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
      ...(verb === 'export' ? { output: { type: 'string', short: 'o' } } : {}),
    },
    allowPositionals: true,
    strict: true,
  });
  const wanted = verb === 'import' ? 1 : 0;
  if (verb === 'import' && positionals.length === 0) throw new Error('skiff store import needs the file skiff store export wrote');
  if (positionals.length > wanted) throw new Error(`unexpected argument "${positionals[wanted]}"`);
  return {
    configFile: values.config as string | undefined,
    overrides: {
      preset: values.preset as string | undefined,
      dataDir: values['data-dir'] as string | undefined,
      logLevel: (values['log-level'] as string | undefined) ?? DEFAULT_LOG_LEVEL,
      nodes: 0,
    },
    output: values.output as string | undefined,
    file: positionals[0],
  };
}

/** `skiff store export|import …`. */
export async function storeCommand(argv: string[], output: Output, cwd: string): Promise<void> {
  const [verb, ...rest] = argv;
  if (verb === 'export') return exportCommand(parseStoreArgs(verb, rest), output, cwd);
  if (verb === 'import') return importCommand(parseStoreArgs(verb, rest), output, cwd);
  throw new Error(verb === undefined ? 'skiff store needs a subcommand: export or import' : `unknown store subcommand "${verb}" (known: export, import)`);
}

/**
 * `skiff store export`: every object under /registry/ of the cluster's store, from one snapshot revision, as JSON
 * lines on stdout or in `--output` (mode 0600, written whole or not at all).
 */
async function exportCommand(args: StoreArgs, output: Output, cwd: string): Promise<void> {
  const { kernel, provider } = await createStoreKernel({ cwd, configFile: args.configFile, overrides: args.overrides });
  const { dataDir, preset } = kernel.config;
  // The store plugins (and the encryption plugin's generated key) would make a new, empty cluster there.
  if (!existsSync(dataDir)) throw new Error(`data dir ${dataDir} does not exist: name the cluster's with --data-dir (or run in the folder of its config)`);
  const file = args.output === undefined ? undefined : resolve(cwd, args.output);
  const human = file === undefined ? output.err : output.out;
  const target = file === undefined ? undefined : await privateFileSink(file);
  const sink: ChunkSink = target?.sink ?? (async (chunk) => output.out(chunk));
  try {
    const { store } = await openStore(kernel, provider);
    const { header, counts } = await writeExport(store, sink, { store: provider, preset, skiffVersion: CLI_VERSION });
    await target?.finish();
    human(`skiff: exported ${header.objects} objects at revision ${header.revision} from ${provider}${file ? ` to ${relative(cwd, file) || file}` : ''}`);
    if (counts.total) human(`  ${counts.toString()}`);
    if (file) human(`  the file holds the cluster's Secrets in plain form: it is mode 0600 (owner only); keep it so`);
  } catch (err) {
    await target?.abort();
    throw err;
  } finally {
    await kernel.stop();
  }
}

/** `skiff store import FILE`: checks the whole file, refuses a store that holds objects, then creates every object. */
async function importCommand(args: StoreArgs, output: Output, cwd: string): Promise<void> {
  const path = resolve(cwd, args.file!);
  if (!existsSync(path)) throw new Error(`no such export file: ${args.file}`);
  const header = await checkExportFile(path, args.file);
  process.umask(SERVER_UMASK);
  const { kernel, provider } = await createStoreKernel({ cwd, configFile: args.configFile, overrides: args.overrides });
  const { dataDir } = kernel.config;
  const previousMode = ensurePrivateDataDir(dataDir);
  if (previousMode !== undefined) output.err(`skiff: data dir ${dataDir} was mode 0${previousMode.toString(8)}; made it 0700 (owner only)`);
  try {
    const { store } = await openStore(kernel, provider);
    await assertEmptyTarget(store, provider, dataDir);
    const counts = await importObjects(store, path, header, args.file);
    output.out(
      `skiff: imported ${counts.total} objects into ${provider} (exported from ${header.store ?? 'a store'} at revision ${header.revision}; the store is at revision ${store.revision()} now)`,
    );
    if (counts.total) output.out(`  ${counts.toString()}`);
  } finally {
    await kernel.stop();
  }
}
