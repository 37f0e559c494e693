import { createHash } from 'node:crypto';
import { open, type Database, type Transaction } from 'lmdb';

/**
 * Reads a running cluster's LMDB store from outside the server process (LMDB lets a reader in another
 * process see every committed write) and renders it as sorted text, one entry a line, so two dumps
 * compare with `toBe` and a difference shows as a line diff:
 *
 *   meta revision=… compactedRevision=…   the last committed and the last compacted revision
 *   object <key> rv=… sha256=…            every object, its resourceVersion and a digest of its stored bytes
 *   event <revision> <type> <key>         every event-log entry
 *
 * The database names and options are those of core/store/src/databases.ts, which @skiff/store does not
 * export: msgpack values whose structures are shared through the database under one symbol key.
 * The digest is taken over the stored bytes rather than the decoded value, and a value that does not
 * decode is shown as such, so a pathological object that slipped into the store (say, nested 100,000
 * levels deep) shows up in the dump instead of breaking it.
 */
export async function dumpStore(path: string): Promise<string> {
  const root = open({ path, readOnly: true, overlappingSync: false, encoding: 'msgpack' });
  try {
    const shared = { sharedStructuresKey: Symbol.for('skiff.structures') };
    const objects = root.openDB<{ metadata?: { resourceVersion?: string } }, string>('objects', shared);
    const events = root.openDB<{ type: string; key: string }, number>('events', shared);
    const meta = root.openDB<number, string>('meta', {});
    // One read transaction: the three databases are read at the same revision.
    const transaction = root.useReadTransaction();
    try {
      const lines = [`meta revision=${meta.get('revision', { transaction }) ?? 0} compactedRevision=${meta.get('compactedRevision', { transaction }) ?? 0}`];
      for (const key of objects.getKeys({ transaction })) {
        const bytes = (objects.getBinary as GetBinaryInTransaction).call(objects, key, { transaction });
        const digest = createHash('sha256')
          .update(bytes ?? '')
          .digest('hex')
          .slice(0, 16);
        const value = decoded(objects, key, transaction);
        const revision = value === undefined ? 'undecodable' : value.metadata?.resourceVersion;
        lines.push(`object ${JSON.stringify(key)} rv=${revision} sha256=${digest}`);
      }
      for (const revision of events.getKeys({ transaction })) {
        const value = decoded(events, revision, transaction);
        lines.push(value === undefined ? `event ${revision} undecodable` : `event ${revision} ${value.type} ${JSON.stringify(value.key)}`);
      }
      return lines.join('\n');
    } finally {
      transaction.done();
    }
  } finally {
    await root.close();
  }
}

/** lmdb-js's getBinary takes the same options as get (see its read.js); its typings leave them out. */
type GetBinaryInTransaction = (key: string, options: { transaction: Transaction }) => Buffer | undefined;

function decoded<V, K extends string | number>(db: Database<V, K>, key: K, transaction: Transaction): V | undefined {
  try {
    return db.get(key, { transaction });
  } catch {
    return undefined;
  }
}
