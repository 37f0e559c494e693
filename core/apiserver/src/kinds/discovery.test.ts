import { describe, expect, it } from 'vitest';
import { DISCOVERY_KINDS } from './discovery.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(DISCOVERY_KINDS);
const slices = DISCOVERY_KINDS[0]!;
const body = {
  metadata: { name: 'web-abc12', namespace: 'default' },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }, { addresses: ['10.0.0.3'] }, { addresses: ['10.0.0.4'] }],
};

describe('endpoint slices', () => {
  it('prints up to three ports and addresses, like kubectl', () => {
    const slice = create(slices, body) as any;
    expect(cells(slices, slice)).toEqual(['web-abc12', 'IPv4', '80', '10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...', '3h5m']);
    expect(cells(slices, { ...slice, ports: [], endpoints: [] })).toEqual(['web-abc12', 'IPv4', '<unset>', '<unset>', '3h5m']);
  });

  it('checks addresses by type and keeps the address type', () => {
    expect(fields(slices, { ...body, endpoints: [{ addresses: ['fe80::1'] }, { addresses: [] }] })).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "fe80::1": must be a valid IPv4 address',
      'endpoints[1].addresses: Required value: must contain at least 1 address',
    ]);
    expect(fields(slices, { ...body, addressType: 'IP' })).toEqual(['addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"']);
    const slice = create(slices, body);
    expect(fields(slices, { ...slice, addressType: 'IPv6', endpoints: [{ addresses: ['fd00::1'] }] }, slice)).toEqual([
      'addressType: Invalid value: "IPv6": field is immutable',
    ]);
    expect(
      fields(slices, {
        ...body,
        ports: [
          { name: 'http', port: 80 },
          { name: 'http', port: 81 },
        ],
      }),
    ).toEqual(['ports[1].name: Duplicate value: "http"']);
  });
});
