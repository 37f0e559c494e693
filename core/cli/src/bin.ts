#!/usr/bin/env node
import { KernelError } from '@skiff/kernel';
import { main } from './main.js';
import { stopOnSignals, type Output } from './up.js';

const output: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/**
 * One line, no stack: a kernel error says what was wrong and where (a bad config, or the plugin that failed
 * and how). With SKIFF_DEBUG, the stack that helps follows: the failing plugin's own, or that of an
 * unexpected error.
 */
function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  output.err(`skiff: ${message}`);
  const failed = err instanceof KernelError ? err.cause : err;
  const stack = typeof failed === 'object' && failed !== null && 'stack' in failed ? failed.stack : undefined;
  if (process.env.SKIFF_DEBUG && typeof stack === 'string' && stack) output.err(stack);
  process.exit(1);
}

main(process.argv.slice(2), output).then((result) => {
  if ('kernel' in result) stopOnSignals(result.kernel, output, (code) => process.exit(code));
  else process.exitCode = result.exitCode;
}, fail);
