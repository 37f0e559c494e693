import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiServerError } from './errors.js';
import { ensurePki, issueClientCertificate, readClusterCa, writeCertificateFiles } from './pki.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-pki-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ensurePki', () => {
  it('creates a CA and a serving certificate for every name the server is reached by', () => {
    const pki = ensurePki(dir, '127.0.0.1');
    const ca = new X509Certificate(pki.caPem);
    const serving = new X509Certificate(pki.certPem);
    expect(ca.ca).toBe(true);
    expect(serving.ca).toBe(false);
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.checkHost('localhost')).toBe('localhost');
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serving.checkIP('::1')).toBe('::1');
    expect(serving.checkHost('kubernetes.default.svc')).toBe('kubernetes.default.svc');
    for (const file of ['ca.key', 'apiserver.key']) expect(statSync(join(dir, 'pki', file)).mode & 0o777).toBe(0o600);
    expect(readFileSync(pki.caFile, 'utf8')).toBe(pki.caPem);
  });

  it('reuses the files on later starts', () => {
    const first = ensurePki(dir, '127.0.0.1');
    const second = ensurePki(dir, '127.0.0.1');
    expect(second.caPem).toBe(first.caPem);
    expect(second.certPem).toBe(first.certPem);
  });

  it('issues a new serving certificate from the same CA when the host changes', () => {
    const first = ensurePki(dir, '127.0.0.1');
    const second = ensurePki(dir, 'api.example.test');
    expect(second.caPem).toBe(first.caPem);
    expect(second.certPem).not.toBe(first.certPem);
    expect(new X509Certificate(second.certPem).checkHost('api.example.test')).toBe('api.example.test');
  });

  it("names the extra addresses (the kubernetes Service's cluster IP, the advertised address), issuing again when they change", () => {
    const before = ensurePki(dir, '0.0.0.0');
    const after = ensurePki(dir, '0.0.0.0', ['10.96.0.1', '192.0.2.7']);
    expect(after.certPem).not.toBe(before.certPem);
    const certificate = new X509Certificate(after.certPem);
    expect([certificate.checkIP('10.96.0.1'), certificate.checkIP('192.0.2.7'), certificate.checkIP('0.0.0.0')]).toEqual(['10.96.0.1', '192.0.2.7', undefined]);
    expect(ensurePki(dir, '0.0.0.0', ['10.96.0.1', '192.0.2.7']).certPem).toBe(after.certPem);
  });
});

describe('issueClientCertificate', () => {
  it('issues a clientAuth certificate signed by the cluster CA: CN the user, one O per group', () => {
    ensurePki(dir, '127.0.0.1');
    const ca = readClusterCa(dir);
    const issued = issueClientCertificate(ca, { user: 'jane@example.com', groups: ['devs', 'équipe'], validitySeconds: 3600 });
    const certificate = new X509Certificate(issued.certPem);
    expect(certificate.verify(new X509Certificate(ca.caPem).publicKey)).toBe(true);
    expect(certificate.checkIssued(new X509Certificate(ca.caPem))).toBe(true);
    expect(certificate.ca).toBe(false);
    expect(certificate.subject.split('\n').sort()).toEqual(['CN=jane@example.com', 'O=devs', 'O=équipe']);
    expect(certificate.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    const lifetime = Date.parse(certificate.validTo) - Date.now();
    expect(lifetime).toBeGreaterThan(3500_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
    expect(issued.notAfter.getTime()).toBe(Date.parse(certificate.validTo));
    expect(issued.keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
  });

  it('never outlives the CA', () => {
    const ca = readClusterCa(dir);
    const issued = issueClientCertificate(ca, { user: 'forever', validitySeconds: 100 * 365 * 24 * 3600 });
    expect(issued.notAfter.getTime()).toBe(Date.parse(new X509Certificate(ca.caPem).validTo));
  });

  it('writes the key owner-only', () => {
    const issued = issueClientCertificate(readClusterCa(dir), { user: 'jane' });
    writeCertificateFiles(join(dir, 'out', 'jane.crt'), join(dir, 'out', 'jane.key'), issued);
    expect(statSync(join(dir, 'out', 'jane.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'out', 'jane.crt'), 'utf8')).toBe(issued.certPem);
  });

  it('refuses what cannot be a client certificate, and a data dir without a CA', () => {
    const ca = readClusterCa(dir);
    expect(() => issueClientCertificate(ca, { user: '' })).toThrow('a client certificate needs a user name (its CN)');
    expect(() => issueClientCertificate(ca, { user: 'x', validitySeconds: 0 })).toThrow('validitySeconds must be a positive whole number (got 0)');
    const empty = join(dir, 'nothing-here');
    expect(() => readClusterCa(empty)).toThrow(ApiServerError);
    expect(() => readClusterCa(empty)).toThrow(`no cluster CA in ${join(empty, 'pki')} (ca.crt and ca.key)`);
  });
});
