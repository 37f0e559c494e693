export { mountPoints, mountsUnder } from './mounts.js';
export { findTool, toolPath } from './tools.js';
