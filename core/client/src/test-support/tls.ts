import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

export interface Pem {
  certPem: string;
  keyPem: string;
}

export interface TestPki {
  ca: Pem;
  /** Valid for 127.0.0.1 and localhost, signed by `ca`. */
  server: Pem;
  /** A client certificate (CN=alice, O=devs) signed by `ca`. */
  client: Pem;
}

/** A throwaway CA with a server and a client certificate. Keys come from node:crypto (fast); forge signs. */
export function createTestPki(): TestPki {
  const ca = issue({ commonName: 'skiff-test-ca' }, undefined, [
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true },
  ]);
  const server = issue({ commonName: '127.0.0.1' }, ca, [
    {
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    },
    { name: 'extKeyUsage', serverAuth: true },
  ]);
  const client = issue({ commonName: 'alice', organizationName: 'devs' }, ca, [{ name: 'extKeyUsage', clientAuth: true }]);
  return { ca, server, client };
}

/** Another client certificate signed by `ca` (a rotated one, say): CN `commonName`. */
export function issueClientCertificate(ca: Pem, commonName: string): Pem {
  return issue({ commonName }, ca, [{ name: 'extKeyUsage', clientAuth: true }]);
}

let serial = 1;

function issue(subject: { commonName: string; organizationName?: string }, issuer: Pem | undefined, extensions: object[]): Pem {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = (serial++).toString(16).padStart(2, '0');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3_600_000);
  const attributes = [{ name: 'commonName', value: subject.commonName }];
  if (subject.organizationName) attributes.push({ name: 'organizationName', value: subject.organizationName });
  cert.setSubject(attributes);
  cert.setIssuer(issuer ? forge.pki.certificateFromPem(issuer.certPem).subject.attributes : attributes);
  cert.setExtensions(extensions);
  cert.sign(forge.pki.privateKeyFromPem(issuer?.keyPem ?? privateKey), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privateKey };
}
