/**
 * Iterates `source` until it ends or `signal` aborts. A source may sit in `next()` for minutes (a quiet
 * watch), so the abort races the pending `next()` instead of waiting for it.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  if (signal.aborted) return;
  const iterator = source[Symbol.asyncIterator]();
  let onAbort!: () => void;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
  });
  let pending: Promise<IteratorResult<T>> | undefined;
  let exhausted = false;
  try {
    for (;;) {
      pending = iterator.next();
      const next = await Promise.race([pending, aborted]);
      if (next === 'aborted') return;
      pending = undefined;
      if (next.done) {
        exhausted = true;
        return;
      }
      yield next.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    // An abandoned next() may still settle, possibly with the error the abort caused; nobody needs it.
    pending?.catch(() => undefined);
    // Tell the source to stop; it may be stuck in next(), so do not wait for it.
    if (!exhausted) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

/** Resolves after `ms`, or early (without error) when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
