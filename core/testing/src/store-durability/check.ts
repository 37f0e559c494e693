import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Store } from '@skiff/store';

export interface AcknowledgedWritesCheck {
  /**
   * Starts the writer: a child process, its stdout piped, that opens the store and calls `writeUntilKilled`
   * with the same `prefix`.
   */
  spawnWriter(): ChildProcess;
  /** Opens the store over the data the killed writer wrote through, as the next process would. */
  reopen(): Promise<Store>;
  /** The prefix of the writer's keys. */
  prefix: string;
  /** How many acknowledged writes to wait for before the SIGKILL (default 400). */
  killAfter?: number;
  /** How long to wait for the writer's acknowledgements, and for the reopened store's watch (default 30 s). */
  timeoutMs?: number;
}

export interface AcknowledgedWritesResult {
  /** The reopened store: close it when done. */
  store: Store;
  /** Every write the writer reported as acknowledged: key → revision. */
  acked: Map<string, number>;
}

/**
 * Kills a process with SIGKILL while it writes through a store, then checks on a reopened store that every write
 * it acknowledged survived: at its revision, in the history a watch replays, and below the revision of the next
 * write. Fails with an AssertionError saying which write was lost.
 */
export async function checkAcknowledgedWritesSurvive(check: AcknowledgedWritesCheck): Promise<AcknowledgedWritesResult> {
  const killAfter = check.killAfter ?? 400;
  const timeoutMs = check.timeoutMs ?? 30_000;
  const acked = await killWhileWriting(check.spawnWriter(), killAfter, timeoutMs);

  const store = await check.reopen();
  try {
    const revisions = [...acked.values()];
    const highest = Math.max(...revisions);
    assert.ok(store.revision() >= highest, `the reopened store is at revision ${store.revision()}, before the acknowledged revision ${highest}`);
    for (const [key, revision] of acked) {
      const stored = await store.get(key);
      assert.ok(stored, `${key}, acknowledged at revision ${revision}, is gone`);
      assert.equal(stored.revision, revision, `${key} was acknowledged at revision ${revision}`);
      assert.equal(stored.object.metadata.resourceVersion, String(revision), `${key}'s resourceVersion`);
    }
    const seen = await historySince(store, check.prefix, Math.min(...revisions) - 1, highest, timeoutMs);
    const missing = revisions.filter((revision) => !seen.has(revision));
    assert.deepEqual(missing, [], 'acknowledged revisions missing from the history a watch replays');
    const next = await store.create(`${check.prefix}after`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } });
    assert.ok(next.revision > highest, `the next write got revision ${next.revision}, not one after ${highest}`);
    return { store, acked };
  } catch (error) {
    await store.close();
    throw error;
  }
}

async function killWhileWriting(child: ChildProcess, killAfter: number, timeoutMs: number): Promise<Map<string, number>> {
  assert.ok(child.stdout, 'spawnWriter must pipe the child’s stdout');
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const acked = new Map<string, number>();
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const [word, revision, key] = line.split(' ');
      if (word !== 'acked' || !key) continue;
      acked.set(key, Number(revision));
      if (acked.size === killAfter) child.kill('SIGKILL');
    }
    const outcome = await exit;
    assert.ok(
      acked.size >= killAfter,
      `the writer acknowledged ${acked.size} of ${killAfter} writes before it ended (${JSON.stringify(outcome)}): ${stderr.join('')}`,
    );
    assert.deepEqual(outcome, { code: null, signal: 'SIGKILL' }, `the writer ended on its own: ${stderr.join('')}`);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  assert.equal(new Set(acked.values()).size, acked.size, 'two acknowledged writes got the same revision');
  return acked;
}

/** The revisions of the events a watch from `from` delivers, up to `until`, or what arrived within `timeoutMs`. */
async function historySince(store: Store, prefix: string, from: number, until: number, timeoutMs: number): Promise<Set<number>> {
  const seen = new Set<number>();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    for await (const event of store.watch(prefix, from, controller.signal)) {
      seen.add(event.revision);
      if (event.revision >= until) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return seen;
}
