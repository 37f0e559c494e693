import { cliPackage } from './new/package-root.js';

/** The CLI's version: its package.json's, read at start. */
export const CLI_VERSION = cliPackage().version;
