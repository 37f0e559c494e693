import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePki } from './pki.js';

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
});
