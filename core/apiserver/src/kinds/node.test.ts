import { describe, expect, it } from 'vitest';
import { NODE_KINDS } from './node.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(NODE_KINDS);
const runtimeClasses = NODE_KINDS[0]!;

describe('runtime classes', () => {
  it('prints the handler and keeps it fixed', () => {
    const rc = create(runtimeClasses, { metadata: { name: 'gvisor' }, handler: 'runsc', scheduling: { nodeSelector: { sandbox: 'true' } } });
    expect(cells(runtimeClasses, rc)).toEqual(['gvisor', 'runsc', '3h5m']);
    expect(fields(runtimeClasses, { ...rc, handler: 'kata' }, rc)).toEqual(['handler: Invalid value: "kata": field is immutable']);
  });

  it('requires a DNS-label handler', () => {
    expect(fields(runtimeClasses, { metadata: { name: 'x' } })).toEqual(['handler: Required value']);
    expect(fields(runtimeClasses, { metadata: { name: 'x' }, handler: 'Run_SC' })).toEqual([
      "handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
});
