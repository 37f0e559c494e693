import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import { recordingLogger, waitFor } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { CertificateRotation, renewalTime } from './rotation.js';

/** A self-signed certificate valid from `from` to `to` (ms since the epoch; X.509 keeps whole seconds). */
function certificate(from: number, to: number): string {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(from);
  cert.validity.notAfter = new Date(to);
  cert.setSubject([{ name: 'commonName', value: 'system:node:n' }]);
  cert.setIssuer([{ name: 'commonName', value: 'system:node:n' }]);
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

describe('certificate rotation', () => {
  it('renews between 70 % and 90 % of the validity, as upstream’s kubelet', () => {
    const from = Date.UTC(2026, 0, 1);
    const to = from + 1000_000_000;
    const pem = certificate(from, to);
    expect(renewalTime(pem, 0)).toBe(from + 700_000_000);
    expect(renewalTime(pem, 1)).toBe(from + 900_000_000);
    expect(renewalTime(pem, 0.5)).toBe(from + 800_000_000);
  });

  it('renews again and again, each time from the certificate it got', async () => {
    const logger = recordingLogger();
    const issued: string[] = [];
    // Two-second certificates, renewed at half their life.
    const next = () => {
      const now = Math.floor(Date.now() / 1000) * 1000;
      const pem = certificate(now, now + 2000);
      issued.push(pem);
      return Promise.resolve(pem);
    };
    const rotation = new CertificateRotation('client', next, logger, { from: 0.5, to: 0.5 });
    rotation.start(await next());
    try {
      await waitFor('two renewals', () => issued.length >= 3, { timeoutMs: 8_000 });
    } finally {
      rotation.stop();
    }
    expect(logger.records.filter((record) => record.message === 'certificate rotated').length).toBeGreaterThanOrEqual(2);
  });
});
