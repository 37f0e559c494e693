import { afterAll, afterEach } from 'vitest';
import { takeServerCrashes } from './harness.js';

/**
 * A `skiff up` that ended on a bug (an unhandled rejection or an uncaught exception) fails the test it ended
 * in, or its file, whatever that test checked itself: the server's own process is not vitest's, so vitest's
 * own check for unhandled rejections does not see it.
 */
function failOnServerCrashes(): void {
  const crashes = takeServerCrashes();
  if (crashes.length > 0) throw new Error(`a skiff server ended on an internal error:\n${crashes.join('\n\n')}`);
}

afterEach(failOnServerCrashes);
afterAll(failOnServerCrashes);
