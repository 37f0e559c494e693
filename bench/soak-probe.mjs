// Loaded into the server under test with `--import` (see watch-soak.bench.mjs). On SIGUSR2 it runs a full
// garbage collection and writes one line with the process's memory to stderr, so the soak can read the
// heap of a real `skiff up` without an inspector connection.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  process.stderr.write(`SOAK-MEMORY ${JSON.stringify({ rss, heapUsed, heapTotal, external })}\n`);
});
