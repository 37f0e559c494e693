import { createHash } from 'node:crypto';

/**
 * Reads a running cluster's keys from its etcd, from outside the server process, in the line format of
 * dumpStore (store-dump.ts), so two dumps compare with `toBe` and a difference shows as a line diff:
 *
 *   meta revision=…                       etcd's current revision (any write anywhere in etcd moves it)
 *   object <key> rv=… sha256=…            every key under `keyPrefix` (shown without it), its mod_revision
 *                                         (the object's resourceVersion) and a digest of its stored bytes
 *
 * etcd keeps the history in its revisions, so there are no event lines: a write that left no key behind still
 * shows in the meta line. Read over etcd's JSON gateway (`POST /v3/kv/range`, base64 keys and values), a page
 * at a time, every page at the revision of the first, so the dump is one consistent snapshot.
 */
export async function dumpEtcd(endpoint: string, keyPrefix: string): Promise<string> {
  const start = Buffer.from(`${keyPrefix}/`);
  // '0' is the byte after '/': the range is every key that starts with `${keyPrefix}/`.
  const end = Buffer.from(`${keyPrefix}0`);
  const lines: string[] = [];
  let revision: string | undefined;
  let from = start;
  for (;;) {
    const page = await range(endpoint, { key: from.toString('base64'), range_end: end.toString('base64'), limit: PAGE, revision });
    revision ??= page.header.revision;
    for (const kv of page.kvs ?? []) {
      const key = Buffer.from(kv.key, 'base64');
      const digest = createHash('sha256')
        .update(Buffer.from(kv.value ?? '', 'base64'))
        .digest('hex')
        .slice(0, 16);
      lines.push(`object ${JSON.stringify(key.subarray(keyPrefix.length).toString('utf8'))} rv=${kv.mod_revision} sha256=${digest}`);
      from = Buffer.concat([key, Buffer.from([0])]);
    }
    if (!page.more) break;
  }
  return [`meta revision=${revision}`, ...lines].join('\n');
}

const PAGE = 500;

/** The JSON gateway's RangeResponse: int64 fields are strings, empty fields are left out. */
interface RangeAnswer {
  header: { revision: string };
  kvs?: { key: string; value?: string; mod_revision: string }[];
  more?: boolean;
}

async function range(endpoint: string, request: Record<string, unknown>): Promise<RangeAnswer> {
  const answer = await fetch(`${endpoint}/v3/kv/range`, { method: 'POST', body: JSON.stringify(request), signal: AbortSignal.timeout(10_000) });
  const body = await answer.text();
  if (!answer.ok) throw new Error(`etcd range at ${endpoint}: HTTP ${answer.status}: ${body.slice(0, 300)}`);
  return JSON.parse(body) as RangeAnswer;
}
