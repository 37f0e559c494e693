import type { Store } from '@skiff/store';

export interface WriteUntilKilledOptions {
  /** Keys are `<prefix><n>`; give the parent's check the same prefix. */
  prefix: string;
  /** Creates kept in flight at once (default 16), so writes share commits as they do under load. */
  inFlight?: number;
}

/**
 * The child's side of `checkAcknowledgedWritesSurvive`: creates objects through `store` forever, keeping
 * `inFlight` creates pending, and prints `acked <revision> <key>` on stdout as each one resolves, until the
 * process is killed. A failed create ends the process with the error, since the check expects every write to
 * succeed.
 */
export function writeUntilKilled(store: Store, options: WriteUntilKilledOptions): void {
  let written = 0;
  const writeNext = (): void => {
    const n = written++;
    const key = `${options.prefix}${n}`;
    store.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w${n}` }, data: { n: String(n) } }).then(
      (stored) => {
        // A write to a pipe is synchronous on Linux: once it returns, the parent has the line.
        process.stdout.write(`acked ${stored.revision} ${key}\n`);
        writeNext();
      },
      (error: unknown) => {
        process.stderr.write(`create ${key} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
        process.exit(1);
      },
    );
  };
  for (let started = 0; started < (options.inFlight ?? 16); started++) writeNext();
}
