import { afterEach, beforeEach, describe } from 'vitest';
import { ContractHarness, type StoreContractFactory } from './harness.js';
import { describeLifecycle } from './lifecycle.js';
import { describeList } from './list.js';
import { describeWatch } from './watch.js';
import { describeWrites } from './writes.js';

export type { StoreContractFactory } from './harness.js';

/**
 * Declares, as a vitest `describe` block named `name`, the tests of everything `Store` documents: revisions and
 * resourceVersion, create/get/update/delete and their StoreErrors, guaranteedUpdate, list (prefix, key order,
 * paging, snapshots, exact revisions, filters), watch (history then live, prevObject, prefixes, many watchers),
 * compaction, close, and, when the factory can `reopen`, what survives a restart.
 *
 * Every test writes under a namespace of its own and compares revisions only with those of its own writes, so
 * one backend can serve the whole suite while other writers use it too. The compaction tests compact the whole
 * store up to their own latest revision: watches and lists elsewhere that still need older revisions fail.
 */
export function describeStoreContract(name: string, factory: StoreContractFactory): void {
  describe(name, () => {
    const harness = new ContractHarness(factory);
    beforeEach(() => harness.begin());
    afterEach(() => harness.end());
    describeWrites(harness);
    describeList(harness);
    describeWatch(harness);
    describeLifecycle(harness);
  });
}
