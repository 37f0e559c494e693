import { join } from 'node:path';
import { describeHostileInput } from './hostile-input.js';
import { dumpStore } from './store-dump.js';

// The hostile-input suite (hostile-input.ts) on the default store: LMDB in the data dir, dumped from its files.
describeHostileInput({
  name: 'LMDB',
  args: () => [],
  dump: (dataDir) => dumpStore(join(dataDir, 'store')),
});
