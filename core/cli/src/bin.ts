#!/usr/bin/env node
import { KernelError } from '@skiff/kernel';
import { exitOnInternalErrors } from './crash.js';
import { main } from './main.js';
import { stopOnSignals, type Output } from './up.js';

/** CI sets CI and wants plain lines, even where its log viewer poses as a terminal. */
const ci = process.env.CI ?? '';
const interactive = process.stdout.isTTY === true && (ci === '' || ci === 'false' || ci === '0');
const output: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  terminal: interactive ? { write: (text) => process.stdout.write(text) } : undefined,
};
exitOnInternalErrors(output);

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

/**
 * `up` starts processes that outlive a killed Skiff (containerd runs in a session of its own): a signal during the
 * start is held until the cluster is up, then stops it like a signal after the start would. A second one exits.
 */
function holdSignalsDuringStart(): { release(): NodeJS.Signals | undefined } {
  let held: NodeJS.Signals | undefined;
  const hold = (signal: NodeJS.Signals) => {
    if (held) {
      output.err(`skiff: ${signal} again, exiting now (the next start cleans up what is left)`);
      process.exit(130);
    }
    held = signal;
    output.out(`skiff: ${signal} while starting; stopping once started`);
  };
  process.on('SIGINT', hold);
  process.on('SIGTERM', hold);
  return {
    release() {
      process.off('SIGINT', hold);
      process.off('SIGTERM', hold);
      return held;
    },
  };
}

const argv = process.argv.slice(2);
const RUNNING_COMMANDS = ['up', 'join', 'apiserver', 'controller-manager', 'scheduler'];
const duringStart = RUNNING_COMMANDS.includes(argv[0] ?? '') ? holdSignalsDuringStart() : undefined;
main(argv, output).then((result) => {
  const held = duringStart?.release();
  if (!('kernel' in result)) {
    process.exitCode = result.exitCode;
    return;
  }
  stopOnSignals(result.kernel, output, (code) => process.exit(code));
  if (held) process.kill(process.pid, held);
}, fail);
