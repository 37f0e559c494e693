export { writeUntilKilled, type WriteUntilKilledOptions } from './writer.js';
export { checkAcknowledgedWritesSurvive, type AcknowledgedWritesCheck, type AcknowledgedWritesResult } from './check.js';
