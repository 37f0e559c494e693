import type { KubeObject } from '@skiff/api';
import { describe, expect, it } from 'vitest';
import { CERTIFICATES_KINDS } from './certificates.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { definition, create, fields, cells } = kindHarness(CERTIFICATES_KINDS);

// An EC P-256 certificate request for CN=alice, base64 as JSON carries []byte.
const REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIS01ISUNBUUF3RURFT01Bd0dBMVVFQXd3RllXeHBZMlV3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQgpCd05DQUFSdXFibnJUd0JCTUNpbjJOM0wvMDZ6RW83SE50dVRHTEQxanlMSEdDNklvWk41eGUwMUZ2bFhTdXQ2CloreXJ1YlhiUDNKMXhOdjJ5d3Q0Y1VQZzgxY0pvQUF3Q2dZSUtvWkl6ajBFQXdJRFNBQXdSUUloQUtkNUcwbi8KZXZMS2FBWjBYTWU2RW1sdzVLSER4cVRZOE9jRnlCRmZrbEdPQWlCNmMwcEtpU0RjaE5qeGUxdGF6RmxCSm14VQpnQzhBa1E2MVliRTNWUmRRcUE9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K';

const csrBody = {
  metadata: { name: 'alice' },
  spec: { request: REQUEST, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], expirationSeconds: 86400, username: 'admin' },
};

describe('certificate signing requests', () => {
  it('prints Age, SignerName, Requestor, RequestedDuration and Condition', () => {
    const csr = create('certificatesigningrequests', csrBody);
    expect(csr.status).toEqual({});
    expect(cells('certificatesigningrequests', csr)).toEqual(['alice', '3h5m', 'kubernetes.io/kube-apiserver-client', 'admin', '24h', 'Pending']);
    csr.status = { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Y2VydA==' };
    expect(cells('certificatesigningrequests', csr).at(-1)).toBe('Approved,Issued');
    csr.status = {
      conditions: [
        { type: 'Denied', status: 'True' },
        { type: 'Failed', status: 'True' },
      ],
    };
    expect(cells('certificatesigningrequests', csr).at(-1)).toBe('Denied,Failed');
  });

  it('requires a PEM request, a signer name with a path, and usages', () => {
    expect(
      fields('certificatesigningrequests', { metadata: { name: 'x' }, spec: { request: Buffer.from('hello').toString('base64'), signerName: 'example' } }),
    ).toEqual([
      'spec.request: Invalid value: []byte{...}: PEM block type must be CERTIFICATE REQUEST',
      'spec.usages: Required value',
      'spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
    ]);
    expect(fields('certificatesigningrequests', { ...csrBody, spec: { ...csrBody.spec, signerName: 'example/signer', expirationSeconds: 60 } })).toEqual([
      'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
      'spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)',
    ]);
    const { signerName: _, ...unsigned } = csrBody.spec;
    expect(fields('certificatesigningrequests', { ...csrBody, spec: unsigned })).toEqual(['spec.signerName: Required value']);
  });

  it('keeps the spec on updates and approval conditions on status updates', () => {
    const old = create('certificatesigningrequests', csrBody);
    old.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved' }] };
    const update = structuredClone(old) as KubeObject & { spec: { usages: string[] }; status: object };
    update.spec.usages = ['server auth'];
    update.status = { conditions: [{ type: 'Failed', status: 'True' }], certificate: 'Y2VydA==' };
    definition('certificatesigningrequests').prepareForUpdate!(update, old, 'status');
    expect(update.spec.usages).toEqual(['client auth']);
    expect(update.status).toEqual({
      conditions: [
        { type: 'Approved', status: 'True', reason: 'AutoApproved' },
        { type: 'Failed', status: 'True' },
      ],
      certificate: 'Y2VydA==',
    });
  });
});
