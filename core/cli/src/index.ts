export { up, stopOnSignals, type Output } from './up.js';
export { parseUpArgs, USAGE, type UpArgs } from './args.js';
export { CLI_VERSION } from './version.js';
