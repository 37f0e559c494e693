import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

// The requester of a CertificateSigningRequest is who made the request, whatever the body says; approval
// changes the conditions only.
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

// An EC P-256 certificate request for CN=alice (the same one certificates.test.ts uses).
const REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIS01ISUNBUUF3RURFT01Bd0dBMVVFQXd3RllXeHBZMlV3V1RBVEJnY3Foa2pPUFFJQkJnZ3Foa2pPUFFNQgpCd05DQUFSdXFibnJUd0JCTUNpbjJOM0wvMDZ6RW83SE50dVRHTEQxanlMSEdDNklvWk41eGUwMUZ2bFhTdXQ2CloreXJ1YlhiUDNKMXhOdjJ5d3Q0Y1VQZzgxY0pvQUF3Q2dZSUtvWkl6ajBFQXdJRFNBQXdSUUloQUtkNUcwbi8KZXZMS2FBWjBYTWU2RW1sdzVLSER4cVRZOE9jRnlCRmZrbEdPQWlCNmMwcEtpU0RjaE5qeGUxdGF6RmxCSm14VQpnQzhBa1E2MVliRTNWUmRRcUE9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K';
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

describe('certificate signing requests through the API', () => {
  it('record the requesting user, and are approved through the approval subresource', async () => {
    const created = await server.request('POST', CSRS, {
      body: {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'alice' },
        spec: {
          request: REQUEST,
          signerName: 'kubernetes.io/kube-apiserver-client',
          usages: ['client auth'],
          username: 'someone-else',
          groups: ['system:masters'],
        },
      },
    });
    expect(created.status).toBe(201);
    const whoami = await server.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(created.json.spec.username).toBe(whoami.json.status.userInfo.username);
    expect(created.json.spec.groups).toEqual(whoami.json.status.userInfo.groups);
    const csr = created.json;
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok', lastUpdateTime: '2024-01-01T00:00:00Z' }] };
    const approved = await server.request('PUT', `${CSRS}/alice/approval`, { body: csr });
    expect(approved.status).toBe(200);
    expect(approved.json.status.conditions[0]).toMatchObject({ type: 'Approved', status: 'True' });
    // A status write may not approve: the Approved condition stays as approval left it.
    const status = (await server.request('GET', `${CSRS}/alice`)).json;
    status.status.conditions = [];
    const written = await server.request('PUT', `${CSRS}/alice/status`, { body: status });
    expect(written.status).toBe(200);
    expect(written.json.status.conditions.map((c: { type: string }) => c.type)).toEqual(['Approved']);
  });

  it('are approved by a merge patch of the approval subresource, which changes only the conditions', async () => {
    const created = await server.request('POST', CSRS, {
      body: {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'patched' },
        spec: { request: REQUEST, signerName: 'example.com/signer', usages: ['client auth'] },
      },
    });
    expect(created.status, created.text).toBe(201);
    const patch = { status: { certificate: 'ZmFrZQ==', conditions: [{ type: 'Approved', status: 'True', reason: 'E2E', message: 'patched' }] } };
    const approved = await server.request('PATCH', `${CSRS}/patched/approval`, { body: patch, contentType: 'application/merge-patch+json' });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.json.status.conditions.map((c: { type: string; message: string }) => [c.type, c.message])).toEqual([['Approved', 'patched']]);
    expect(approved.json.status.certificate).toBeUndefined();
    const discovery = await server.request('GET', '/apis/certificates.k8s.io/v1');
    const resource = discovery.json.resources.find((r: { name: string }) => r.name === 'certificatesigningrequests/approval');
    expect(resource.verbs).toEqual(['get', 'patch', 'update']);
  });

  it('are selected by spec.signerName, as upstream’s e2e test lists them', async () => {
    const csr = (name: string, signerName: string) => ({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: REQUEST, signerName, usages: ['client auth'] },
    });
    const made = await server.request('POST', CSRS, { body: csr('by-signer', 'example.com/e2e-signer') });
    expect(made.status, made.text).toBe(201);
    const selected = await server.request('GET', `${CSRS}?fieldSelector=${encodeURIComponent('spec.signerName=example.com/e2e-signer')}`);
    expect(selected.status).toBe(200);
    expect(selected.json.items.map((item: any) => item.metadata.name)).toEqual(['by-signer']);
    const others = await server.request('GET', `${CSRS}?fieldSelector=${encodeURIComponent('spec.signerName!=example.com/e2e-signer')}`);
    expect(others.json.items.map((item: any) => item.metadata.name)).not.toContain('by-signer');
  });
});
