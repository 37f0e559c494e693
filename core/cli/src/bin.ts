#!/usr/bin/env node
import { KernelError } from '@skiff/kernel';
import { main } from './main.js';
import { stopOnSignals, type Output } from './up.js';

const output: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

function fail(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  output.err(`skiff: ${message}`);
  if (process.env.SKIFF_DEBUG && err instanceof Error && !(err instanceof KernelError)) output.err(err.stack ?? '');
  process.exit(1);
}

main(process.argv.slice(2), output).then((result) => {
  if ('kernel' in result) stopOnSignals(result.kernel, output, (code) => process.exit(code));
  else process.exitCode = result.exitCode;
}, fail);
