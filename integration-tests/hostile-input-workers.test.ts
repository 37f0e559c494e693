import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './harness.js';
import { describeHostileInput } from './hostile-input.js';
import { dumpStore } from './store-dump.js';

// The hostile-input suite (hostile-input.ts) with the API server on two threads (config apiServer.workers: 2): every
// case's connection reaches whichever thread accepts it, and the LMDB store they share is dumped from its files.
// Declared before the suite, these hooks run before its beforeAll and after its afterAll.

let configDir: string;
let configFile: string;

beforeAll(() => {
  configDir = tempDir('hostile-input-workers-config');
  configFile = join(configDir, 'skiff.config.json');
  writeFileSync(configFile, JSON.stringify({ preset: 'dev', apiServer: { workers: 2, workerStart: 'at-start' } }));
});

afterAll(() => {
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

describeHostileInput({
  name: 'LMDB, 2 API server threads',
  args: () => ['--config', configFile],
  dump: (dataDir) => dumpStore(join(dataDir, 'store')),
});
