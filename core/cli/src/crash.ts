import type { Output } from './up.js';

/** The exit code of a process ended by a bug (sysexits' EX_SOFTWARE), apart from 1 (a failed start) and 130 (a second signal). */
export const INTERNAL_ERROR_EXIT_CODE = 70;

/**
 * A rejection nobody handled, or an exception nobody caught, is a bug in Skiff or in a plugin: what users cause
 * (bad requests, a full disk) is answered where it happens and never gets here. Like Node's default and like
 * upstream's components on a panic, the process ends rather than run on in a state nobody planned for; what
 * it leaves behind, the next start cleans up, and every acknowledged write is already on disk. It says so first
 * in one line that people, supervisors and the integration tests can match, with the stack whatever SKIFF_DEBUG
 * says, since the stack is what a bug report needs.
 */
export function exitOnInternalErrors(output: Output, exit: (code: number) => never = (code) => process.exit(code)): void {
  const report = (what: string) => (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    output.err(`skiff: internal error (${what}), exiting: ${message}`);
    if (err instanceof Error && err.stack) output.err(err.stack);
    exit(INTERNAL_ERROR_EXIT_CODE);
  };
  process.on('unhandledRejection', report('unhandled promise rejection'));
  process.on('uncaughtException', report('uncaught exception'));
}
