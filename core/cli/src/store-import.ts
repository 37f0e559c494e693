import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Components } from '@skiff/kernel';
import {
  ExportFormatError,
  KindCounts,
  objectToImport,
  parseHeader,
  parseObjectLine,
  REGISTRY_PREFIX,
  type ExportedObject,
  type ExportHeader,
} from './store-format.js';

/** Creates in flight at once: etcd answers each after a Raft round, so a few at a time go much faster than one. */
export const IMPORT_CONCURRENCY = 16;

type Store = Components['store'];

export interface NumberedObject extends ExportedObject {
  line: number;
}

/** The lines of `path` with their numbers (from 1); `label` names the file in errors. */
async function* numberedLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) yield { line: ++line, text };
}

/** The header and the object lines of an export file, each checked as it is read. */
export async function* readExport(path: string, label = path): AsyncGenerator<ExportHeader | NumberedObject> {
  let header: ExportHeader | undefined;
  for await (const { line, text } of numberedLines(path)) {
    if (!header) {
      header = parseHeader(label, text);
      yield header;
    } else yield { line, ...parseObjectLine(label, line, text) };
  }
  if (!header) parseHeader(label, undefined);
}

/**
 * Reads the whole file before anything is written: every line well-formed, no key twice, as many objects as the
 * header announces. Returns the header.
 */
export async function checkExportFile(path: string, label = path): Promise<ExportHeader> {
  let header: ExportHeader | undefined;
  const firstLine = new Map<string, number>();
  for await (const item of readExport(path, label)) {
    if (!('line' in item)) {
      header = item;
      continue;
    }
    const earlier = firstLine.get(item.key);
    if (earlier !== undefined) throw new ExportFormatError(label, item.line, `key ${item.key} appears again (first on line ${earlier})`);
    firstLine.set(item.key, item.line);
  }
  if (firstLine.size !== header!.objects)
    throw new Error(
      `${label}: holds ${firstLine.size} objects but its header announces ${header!.objects}: the file is ${firstLine.size < header!.objects ? 'cut off (an export that did not finish?)' : 'not as the export wrote it'}; nothing was imported`,
    );
  return header!;
}

/** What to do about a store that already holds objects, by the plugin that provides it. */
function emptyStoreHint(provider: string, dataDir: string): string {
  if (provider === '@skiff/store') return `import into a data dir whose store/ is empty or absent (move ${dataDir}/store aside, or use another --data-dir)`;
  if (provider === '@skiff/plugin-store-etcd') return 'import into a new etcd cluster, or another keyPrefix of the etcd plugin';
  return 'import into an empty store';
}

/** Refuses a store that holds anything under `/registry/`: an import creates objects and never overwrites them. */
export async function assertEmptyTarget(store: Store, provider: string, dataDir: string): Promise<void> {
  const { items } = await store.list(REGISTRY_PREFIX, { limit: 1 });
  if (items.length)
    throw new Error(
      `the target store (${provider}) already holds objects under ${REGISTRY_PREFIX} (such as ${items[0]!.key}): ${emptyStoreHint(provider, dataDir)}`,
    );
}

/**
 * Creates every object of the (checked) file at its key, without its old resourceVersion. A write that fails stops
 * the import with an error that says how much of the export the store now holds.
 */
export async function importObjects(store: Store, path: string, header: ExportHeader, label = path): Promise<KindCounts> {
  const counts = new KindCounts();
  const inFlight = new Set<Promise<void>>();
  let failure: Error | undefined;
  for await (const item of readExport(path, label)) {
    if (!('line' in item)) continue;
    if (failure) break;
    const { key, object, line } = item;
    const write: Promise<void> = store.create(key, objectToImport(object)).then(
      () => counts.add(key, object),
      (err: unknown) => {
        failure ??= new Error(`${label}:${line}: creating ${key} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      },
    );
    const tracked = write.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= IMPORT_CONCURRENCY) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure)
    throw new Error(
      `${failure.message}. The import stopped with ${counts.total} of the ${header.objects} objects created: the target store holds part of the export; empty it before importing again`,
      { cause: failure },
    );
  return counts;
}
