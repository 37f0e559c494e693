export { main, type CommandResult } from './main.js';
export { up, stopOnSignals, type Output } from './up.js';
export { parseUpArgs, helpRequested, type UpArgs } from './args.js';
export { ensurePrivateDataDir, DATA_DIR_MODE, SERVER_UMASK } from './data-dir.js';
export { COMMANDS, USAGE } from './usage.js';
export { CLI_VERSION } from './version.js';
