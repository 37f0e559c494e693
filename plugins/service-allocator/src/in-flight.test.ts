import type { AuditEvent } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { ServiceWritesInFlight } from './in-flight.js';

const event = (stage: AuditEvent['stage'], verb: string, namespace: string | undefined, extra: Partial<AuditEvent> = {}): AuditEvent => ({
  auditID: 'x',
  stage,
  verb,
  requestURI: '/',
  sourceIPs: [],
  objectRef: { resource: 'services', apiGroup: '', apiVersion: 'v1', ...(namespace !== undefined && { namespace }) },
  requestReceivedTimestamp: '',
  stageTimestamp: '',
  ...extra,
});

describe('ServiceWritesInFlight', () => {
  it('calls quiet when the last write to services in a namespace finishes, whatever its outcome', () => {
    const quiet: string[] = [];
    const writes = new ServiceWritesInFlight((namespace) => quiet.push(namespace));
    writes.observe(event('RequestReceived', 'create', 'a'));
    writes.observe(event('RequestReceived', 'delete', 'a'));
    writes.observe(event('RequestReceived', 'get', 'a'));
    expect(writes.busy('a')).toBe(true);
    writes.observe(event('ResponseComplete', 'create', 'a', { responseStatus: { code: 422 } }));
    expect(quiet).toEqual([]);
    writes.observe(event('ResponseComplete', 'delete', 'a', { responseStatus: { code: 200 } }));
    expect(quiet).toEqual(['a']);
    expect(writes.busy('a')).toBe(false);
  });

  it('counts a write across all namespaces as busy everywhere, and ignores other resources and subresources', () => {
    const writes = new ServiceWritesInFlight(() => undefined);
    writes.observe(event('RequestReceived', 'deletecollection', undefined));
    expect(writes.busy('b')).toBe(true);
    const other = new ServiceWritesInFlight(() => undefined);
    other.observe({ ...event('RequestReceived', 'create', 'a'), objectRef: { resource: 'configmaps', apiGroup: '', namespace: 'a' } });
    other.observe({ ...event('RequestReceived', 'update', 'a'), objectRef: { resource: 'services', apiGroup: '', namespace: 'a', subresource: 'status' } });
    expect(other.busy('a')).toBe(false);
  });

  it('hands the Service a successful write answered to written', () => {
    const written: string[] = [];
    const writes = new ServiceWritesInFlight(
      () => undefined,
      (service) => written.push(service.metadata.name!),
    );
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'a' } };
    writes.observe(event('RequestReceived', 'create', 'a'));
    writes.observe(event('ResponseComplete', 'create', 'a', { responseStatus: { code: 201 }, requestObject: service }));
    expect(written).toEqual(['web']);
  });
});
