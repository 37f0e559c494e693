import { describe, expect, it } from 'vitest';
import { ServiceWritesInFlight } from './in-flight.js';

describe('ServiceWritesInFlight', () => {
  it('calls quiet when the last write to services in a namespace ends, whatever its outcome', () => {
    const quiet: string[] = [];
    const writes = new ServiceWritesInFlight((namespace) => quiet.push(namespace));
    writes.begin('a');
    writes.begin('a');
    expect(writes.busy('a')).toBe(true);
    writes.end('a', { succeeded: false });
    expect(quiet).toEqual([]);
    writes.end('a', { succeeded: true });
    expect(quiet).toEqual(['a']);
    expect(writes.busy('a')).toBe(false);
  });

  it('counts a write across all namespaces as busy everywhere', () => {
    const writes = new ServiceWritesInFlight(() => undefined);
    writes.begin('');
    expect(writes.busy('b')).toBe(true);
    expect(new ServiceWritesInFlight(() => undefined).busy('a')).toBe(false);
  });

  it('hands the Service a successful write answered with to written, and nothing from a failed one', () => {
    const written: string[] = [];
    const writes = new ServiceWritesInFlight(
      () => undefined,
      (service) => written.push(service.metadata.name!),
    );
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'a' } };
    writes.begin('a');
    writes.end('a', { succeeded: true, object: service });
    writes.begin('a');
    writes.end('a', { succeeded: false, object: { ...service, metadata: { name: 'failed' } } });
    expect(written).toEqual(['web']);
  });
});
