import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CniConfList, CniResult, RuntimeConfig } from './types.js';

/** What an ADD leaves behind so DEL and CHECK can hand the plugins the same config and the prevResult (as libcni keeps it). */
export interface CachedAttachment {
  kind: 'cniCacheV1';
  networkName: string;
  containerId: string;
  ifName: string;
  netns: string;
  cniArgs: [string, string][];
  capabilityArgs: RuntimeConfig;
  /** The list as it ran, so DEL undoes exactly what ADD did even when the options changed since. */
  config: CniConfList;
  result: CniResult;
}

/** ADD results, one file per network, container and interface: `<dir>/<network>-<container>-<ifName>`. */
/** A cache file's content, when it is an attachment to `networkName`. */
function isAttachmentOf(value: unknown, networkName: string): value is CachedAttachment {
  return typeof value === 'object' && value !== null && 'networkName' in value && value.networkName === networkName;
}

export class ResultCache {
  constructor(readonly dir: string) {}

  private file(networkName: string, containerId: string, ifName: string): string {
    return join(this.dir, [networkName, containerId, ifName].map(encodeURIComponent).join('-'));
  }

  async read(networkName: string, containerId: string, ifName: string): Promise<CachedAttachment | undefined> {
    try {
      return JSON.parse(await readFile(this.file(networkName, containerId, ifName), 'utf8')) as CachedAttachment;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) return undefined;
      throw err;
    }
  }

  /** Written whole or not at all: a half-written file would leave DEL without its prevResult. */
  async write(entry: CachedAttachment): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.file(entry.networkName, entry.containerId, entry.ifName);
    await writeFile(`${file}.tmp`, JSON.stringify(entry, null, 2));
    await rename(`${file}.tmp`, file);
  }

  async remove(networkName: string, containerId: string, ifName: string): Promise<void> {
    await rm(this.file(networkName, containerId, ifName), { force: true });
  }

  /** The attachments of a network that were added and not yet deleted. */
  async list(networkName: string): Promise<CachedAttachment[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const prefix = `${encodeURIComponent(networkName)}-`;
    const entries: CachedAttachment[] = [];
    for (const name of names) {
      if (!name.startsWith(prefix) || name.endsWith('.tmp')) continue;
      const entry = await readFile(join(this.dir, name), 'utf8').then(
        (text): unknown => JSON.parse(text),
        () => undefined,
      );
      if (isAttachmentOf(entry, networkName)) entries.push(entry);
    }
    return entries;
  }
}
