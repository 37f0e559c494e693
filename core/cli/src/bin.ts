#!/usr/bin/env node
import { KernelError } from '@skiff/kernel';
import { USAGE } from './args.js';
import { stopOnSignals, up, type Output } from './up.js';
import { CLI_VERSION } from './version.js';

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

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case 'up':
    up(rest, output).then((kernel) => stopOnSignals(kernel, output, (code) => process.exit(code)), fail);
    break;
  case 'version':
  case '--version':
    output.out(`skiff ${CLI_VERSION}`);
    break;
  case undefined:
  case 'help':
  case '--help':
  case '-h':
    output.out(USAGE);
    break;
  default:
    output.err(`skiff: unknown command "${command}"\n${USAGE}`);
    process.exit(2);
}
