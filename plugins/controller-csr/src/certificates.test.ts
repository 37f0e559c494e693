import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';
import { ensurePki, readClusterCa } from '@skiff/apiserver';
import type { CertificateSigningRequest } from '@skiff/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingCaFromPem, type SigningCa } from './ca.js';
import { cleanupTime } from './cleaner.js';
import { CsrError } from './errors.js';
import { issueCertificate, validityPeriod } from './issue.js';
import { SIGNER } from './names.js';
import { parseCertificateRequest } from './request.js';
import { kubeletClientProblem, kubeletServingProblem, signerProblem } from './rules.js';
import { certificateRequestPem, NODE_CLIENT_USAGES, NODE_SERVING_USAGES } from './test-support.js';

const base64 = (text: string) => Buffer.from(text).toString('base64');
const parse = (options: Parameters<typeof certificateRequestPem>[0]) => parseCertificateRequest(base64(certificateRequestPem(options).pem));
const node = { commonName: 'system:node:n1', organizations: ['system:nodes'] };

describe('reading a certificate request', () => {
  it('reads subject and alternative names of EC, RSA and Ed25519 requests', () => {
    for (const keyType of ['ec', 'rsa', 'ed25519'] as const) {
      const request = parse({
        keyType,
        commonName: 'alice',
        organizations: ['devs', 'ops'],
        dnsNames: ['a.example'],
        ipAddresses: ['10.0.0.1', 'fd00::1'],
        emailAddresses: ['alice@example.com'],
      });
      expect({ keyType, ...request, subject: undefined, publicKeyInfo: undefined }).toEqual({
        keyType,
        commonName: 'alice',
        organizations: ['devs', 'ops'],
        dnsNames: ['a.example'],
        ipAddresses: ['10.0.0.1', expect.stringMatching(/^fd00:(0:)*:?0*1$/)],
        emailAddresses: ['alice@example.com'],
        uris: [],
        subject: undefined,
        publicKeyInfo: undefined,
      });
    }
  });

  it('refuses a request signed with another key, and text that is no request', () => {
    expect(() => parse({ commonName: 'mallory', signedByOtherKey: true })).toThrow('its signature does not match its public key');
    expect(() => parse({ keyType: 'rsa', commonName: 'mallory', signedByOtherKey: true })).toThrow(CsrError);
    expect(() => parseCertificateRequest(base64('hello'))).toThrow('its PEM cannot be read');
    expect(() => parseCertificateRequest(base64(caCertificate.toString()))).toThrow('it holds no CERTIFICATE REQUEST PEM block');
    expect(() => parseCertificateRequest(base64('-----BEGIN CERTIFICATE REQUEST-----\naGVsbG8=\n-----END CERTIFICATE REQUEST-----\n'))).toThrow(
      /the certificate request cannot be used/,
    );
  });
});

describe("the signers' rules", () => {
  it('take a node client request: system:nodes, system:node:<name>, no SANs, client usages', () => {
    expect(kubeletClientProblem(parse(node), NODE_CLIENT_USAGES)).toBeUndefined();
    expect(kubeletClientProblem(parse(node), ['digital signature', 'client auth'])).toBeUndefined();
    expect(kubeletClientProblem(parse({ ...node, organizations: ['system:nodes', 'system:masters'] }), NODE_CLIENT_USAGES)).toMatch(
      /organization must be exactly/,
    );
    expect(kubeletClientProblem(parse({ ...node, commonName: 'system:node:' }), NODE_CLIENT_USAGES)).toMatch(/common name/);
    expect(kubeletClientProblem(parse({ ...node, commonName: 'alice' }), NODE_CLIENT_USAGES)).toMatch(/common name/);
    expect(kubeletClientProblem(parse({ ...node, dnsNames: ['n1'] }), NODE_CLIENT_USAGES)).toMatch(/no subject alternative names/);
    expect(kubeletClientProblem(parse(node), ['client auth'])).toMatch(/usages must be/);
    expect(kubeletClientProblem(parse(node), [...NODE_CLIENT_USAGES, 'server auth'])).toMatch(/usages must be/);
  });

  it('take a node serving request: a DNS or IP name, no email or URI, server usages', () => {
    expect(kubeletServingProblem(parse({ ...node, ipAddresses: ['10.0.0.1'] }), NODE_SERVING_USAGES)).toBeUndefined();
    expect(kubeletServingProblem(parse(node), NODE_SERVING_USAGES)).toMatch(/at least one DNS name or IP address/);
    expect(kubeletServingProblem(parse({ ...node, dnsNames: ['n1'], emailAddresses: ['n1@example.com'] }), NODE_SERVING_USAGES)).toMatch(/no email or URI/);
    expect(kubeletServingProblem(parse({ ...node, dnsNames: ['n1'] }), NODE_CLIENT_USAGES)).toMatch(/server auth/);
  });

  it('give kube-apiserver-client any subject, with client auth among client usages only', () => {
    const request = parse({ commonName: 'alice', dnsNames: ['a.example'] });
    expect(signerProblem(SIGNER.KUBE_APISERVER_CLIENT, request, ['client auth'])).toBeUndefined();
    expect(signerProblem(SIGNER.KUBE_APISERVER_CLIENT, request, ['digital signature', 'key encipherment', 'client auth'])).toBeUndefined();
    expect(signerProblem(SIGNER.KUBE_APISERVER_CLIENT, request, ['digital signature'])).toMatch(/must include "client auth"/);
    expect(signerProblem(SIGNER.KUBE_APISERVER_CLIENT, request, ['client auth', 'server auth'])).toMatch(/may add only/);
    expect(signerProblem('example.com/other', request, ['client auth'])).toMatch(/not one of this controller's/);
  });
});

// A cluster CA as the API server makes it, in a data dir of its own.
let dir: string;
let ca: SigningCa;
let caCertificate: X509Certificate;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'skiff-csr-'));
  ensurePki(dir, '127.0.0.1');
  const files = readClusterCa(dir);
  ca = signingCaFromPem(files.caPem, files.caKeyPem);
  caCertificate = new X509Certificate(files.caPem);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('issuing a certificate', () => {
  it('copies subject, key and names from the request, and takes its usages from the spec', () => {
    for (const keyType of ['ec', 'rsa', 'ed25519'] as const) {
      const request = parse({ keyType, commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ipAddresses: ['10.0.0.1'] });
      const validity = validityPeriod(Date.now(), { durationSeconds: 3600, caNotAfter: ca.notAfter });
      const certificate = new X509Certificate(issueCertificate(ca, request, NODE_SERVING_USAGES, validity));
      expect(certificate.verify(caCertificate.publicKey)).toBe(true);
      expect(certificate.checkIssued(caCertificate)).toBe(true);
      expect(certificate.subject.split('\n').sort()).toEqual(['CN=system:node:n1', 'O=system:nodes']);
      expect(certificate.subjectAltName).toBe('DNS:n1, IP Address:10.0.0.1');
      expect(certificate.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
      expect(certificate.ca).toBe(false);
      expect(certificate.publicKey.asymmetricKeyType).toBe(keyType);
      expect(Date.parse(certificate.validTo)).toBe(validity.notAfter.getTime());
    }
  });

  it('sets the key usage bits the spec names (read back with forge, for an RSA key)', () => {
    const request = parse({ keyType: 'rsa', commonName: 'alice', organizations: ['devs'] });
    const validity = validityPeriod(Date.now(), { durationSeconds: 3600, caNotAfter: ca.notAfter });
    const certificate = forge.pki.certificateFromPem(issueCertificate(ca, request, ['digital signature', 'key encipherment', 'client auth'], validity));
    expect(certificate.getExtension('keyUsage')).toMatchObject({ critical: true, digitalSignature: true, keyEncipherment: true, dataEncipherment: false });
    expect(certificate.getExtension('extKeyUsage')).toMatchObject({ clientAuth: true });
    expect(certificate.getExtension('basicConstraints')).toMatchObject({ cA: false });
    expect(certificate.getExtension('subjectAltName')).toBeNull();
    expect(certificate.getExtension('authorityKeyIdentifier')).toBeTruthy();
    // A minimal positive INTEGER: no leading zero octet, top bit clear.
    expect(certificate.serialNumber).toMatch(/^(0[1-9a-f]|[1-7][0-9a-f])[0-9a-f]{30}$/);
  });

  it('is valid for the shortest of the request, the signer and the CA, from five minutes back', () => {
    const now = Date.parse('2030-01-01T00:00:00.400Z');
    const whole = Date.parse('2030-01-01T00:00:00Z');
    const far = new Date('2040-01-01T00:00:00Z');
    expect(validityPeriod(now, { durationSeconds: 365 * 86400, caNotAfter: far })).toEqual({
      notBefore: new Date(whole - 300_000),
      notAfter: new Date(whole + 365 * 86400_000),
    });
    expect(validityPeriod(now, { expirationSeconds: 3600, durationSeconds: 86400, caNotAfter: far }).notAfter).toEqual(new Date(whole + 3600_000));
    expect(validityPeriod(now, { expirationSeconds: 60, durationSeconds: 86400, caNotAfter: far }).notAfter).toEqual(new Date(whole + 600_000));
    expect(validityPeriod(now, { expirationSeconds: 86400 * 7, durationSeconds: 86400, caNotAfter: far }).notAfter).toEqual(new Date(whole + 86400_000));
    const caEnd = new Date('2030-01-01T00:30:00Z');
    expect(validityPeriod(now, { expirationSeconds: 7200, durationSeconds: 86400, caNotAfter: caEnd }).notAfter).toEqual(caEnd);
  });

  it('refuses a CA whose key is not its own', () => {
    ensurePki(join(dir, 'other'), '127.0.0.1');
    expect(() => signingCaFromPem(caCertificate.toString(), readClusterCa(join(dir, 'other')).caKeyPem)).toThrow(
      'no cluster CA to sign certificates with: the CA key does not belong to the CA certificate',
    );
  });
});

describe('when the cleaner deletes a request', () => {
  const created = Date.parse('2030-01-01T00:00:00Z');
  const settings = { finishedRetentionMs: 3600_000, pendingRetentionMs: 86400_000 };
  const at = (minutes: number) => new Date(created + minutes * 60_000).toISOString();
  const csr = (status: CertificateSigningRequest['status']): CertificateSigningRequest => ({
    metadata: { name: 'x', creationTimestamp: at(0) },
    spec: { request: '', signerName: SIGNER.KUBE_APISERVER_CLIENT },
    status,
  });
  const condition = (type: string, minutes?: number) => ({ type, status: 'True', ...(minutes === undefined ? {} : { lastUpdateTime: at(minutes) }) });

  it('keeps pending requests a day, and finished ones an hour after their condition', () => {
    expect(cleanupTime(csr(undefined), settings)).toBe(created + 86400_000);
    expect(cleanupTime(csr({ conditions: [condition('Denied', 10)] }), settings)).toBe(created + 70 * 60_000);
    expect(cleanupTime(csr({ conditions: [condition('Approved', 5), condition('Failed', 20)] }), settings)).toBe(created + 80 * 60_000);
    expect(cleanupTime(csr({ conditions: [condition('Denied')] }), settings)).toBe(created + 60 * 60_000);
  });

  it('keeps an approved request its signer has not signed, and drops an issued one an hour after approval or when its certificate expires', () => {
    expect(cleanupTime(csr({ conditions: [condition('Approved', 5)] }), settings)).toBeUndefined();
    const request = parse({ commonName: 'old' });
    const expiredAt = Date.parse('2029-12-31T23:00:00Z');
    const pem = issueCertificate(ca, request, ['client auth'], { notBefore: new Date('2029-12-01T00:00:00Z'), notAfter: new Date(expiredAt) });
    expect(cleanupTime(csr({ conditions: [condition('Approved', 5)], certificate: base64(pem) }), settings)).toBe(expiredAt);
    expect(cleanupTime(csr({ conditions: [condition('Approved', 5)], certificate: base64('garbage') }), settings)).toBe(created + 65 * 60_000);
  });
});
