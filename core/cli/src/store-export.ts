import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Components } from '@skiff/kernel';
import { EXPORT_KIND, EXPORT_VERSION, headerLine, KindCounts, objectLine, REGISTRY_PREFIX, type ExportHeader } from './store-format.js';

/** Objects per list page: one snapshot revision across pages, through the store's continue tokens. */
export const EXPORT_PAGE_SIZE = 500;

/** The export file holds Secrets in plain form: its owner only. */
export const EXPORT_FILE_MODE = 0o600;

/** Where the lines go; each chunk is one or more whole lines without the last newline. */
export type ChunkSink = (chunk: string) => Promise<void>;

export interface ExportResult {
  header: ExportHeader;
  counts: KindCounts;
}

type Store = Components['store'];

/** How many objects are under the prefix at the snapshot of `first` (the first page): the store says, or the pages are counted. */
async function countAtSnapshot(store: Store, first: Awaited<ReturnType<Store['list']>>, pageSize: number): Promise<number> {
  if (first.continue === undefined) return first.items.length;
  if (first.remainingItemCount !== undefined) return first.items.length + first.remainingItemCount;
  let count = first.items.length;
  for (let token: string | undefined = first.continue; token !== undefined; ) {
    const page = await store.list(REGISTRY_PREFIX, { limit: pageSize, continue: token });
    count += page.items.length;
    token = page.continue;
  }
  return count;
}

/**
 * Writes the header and every object under `/registry/`, read in pages from the revision of the first page. The
 * header announces the count; a store whose pages hold another number than it listed is an error, not a file.
 */
export async function writeExport(
  store: Store,
  sink: ChunkSink,
  about: Pick<ExportHeader, 'store' | 'preset' | 'skiffVersion'>,
  pageSize = EXPORT_PAGE_SIZE,
): Promise<ExportResult> {
  let page = await store.list(REGISTRY_PREFIX, { limit: pageSize });
  const header: ExportHeader = {
    kind: EXPORT_KIND,
    version: EXPORT_VERSION,
    revision: page.revision,
    objects: await countAtSnapshot(store, page, pageSize),
    ...about,
    exportedAt: new Date().toISOString(),
  };
  await sink(headerLine(header));
  const counts = new KindCounts();
  for (;;) {
    if (page.items.length) {
      for (const { key, object } of page.items) counts.add(key, object);
      await sink(page.items.map(({ key, object }) => objectLine(key, object)).join('\n'));
    }
    if (page.continue === undefined) break;
    page = await store.list(REGISTRY_PREFIX, { limit: pageSize, continue: page.continue });
  }
  if (counts.total !== header.objects)
    throw new Error(`the store listed ${header.objects} objects at revision ${header.revision} but its pages held ${counts.total}; nothing was exported`);
  return { header, counts };
}

/**
 * A file written beside `path` with mode 0600 and renamed over it once whole, so `path` is never a cut-off export
 * nor readable by others; `abort` removes what was written.
 */
export async function privateFileSink(path: string): Promise<{ sink: ChunkSink; finish(): Promise<void>; abort(): Promise<void> }> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.partial`);
  const handle = await open(temporary, 'wx', EXPORT_FILE_MODE);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close();
  };
  return {
    sink: async (chunk) => {
      await handle.write(`${chunk}\n`);
    },
    finish: async () => {
      await handle.sync();
      await close();
      await rename(temporary, path);
    },
    abort: async () => {
      await close().catch(() => undefined);
      await rm(temporary, { force: true });
    },
  };
}
