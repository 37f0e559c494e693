import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@skiff/apiserver';
import { describe, expect, it } from 'vitest';
import { caCertHash, parseJoinArgs } from './join.js';
import { parseTtl } from './token.js';

const TOKEN = 'abcdef.0123456789abcdef';
const HASH = `sha256:${'a'.repeat(64)}`;

describe('skiff join flags', () => {
  it('reads the server, token and CA pin, and the node flags with their defaults', () => {
    const args = parseJoinArgs(
      ['https://10.0.0.1:6443/', '--token', TOKEN, '--ca-cert-hash', HASH, '--node-name', 'worker-1', '--node-ip', '10.0.0.7'],
      '/srv',
    );
    expect(args).toMatchObject({
      server: 'https://10.0.0.1:6443',
      bootstrap: { tokenId: 'abcdef', tokenSecret: '0123456789abcdef', caHash: 'a'.repeat(64) },
      preset: 'dev',
      dataDir: '/srv/.skiff',
      nodeName: 'worker-1',
      nodeIP: '10.0.0.7',
    });
  });

  it('takes several API servers, comma-separated: it bootstraps through the first and fails over between all', () => {
    const args = parseJoinArgs(['https://10.0.0.1:6443,https://10.0.0.2:6443/', '--token', TOKEN, '--ca-cert-hash', HASH], '/srv');
    expect(args).toMatchObject({ server: 'https://10.0.0.1:6443', servers: ['https://10.0.0.1:6443', 'https://10.0.0.2:6443'] });
    expect(() => parseJoinArgs(['https://10.0.0.1:6443,http://10.0.0.2:6443'], '/')).toThrow(/must be an https URL/);
  });

  it('needs no token once the node has joined', () => {
    expect(parseJoinArgs(['https://10.0.0.1:6443', '--preset', 'local', '--data-dir', 'node'], '/srv')).toMatchObject({
      preset: 'local',
      dataDir: '/srv/node',
    });
    expect(parseJoinArgs(['https://10.0.0.1:6443'], '/srv').bootstrap).toBeUndefined();
  });

  it('refuses bad input with one line naming the flag', () => {
    expect(() => parseJoinArgs([], '/')).toThrow(/needs the API server/);
    expect(() => parseJoinArgs(['http://10.0.0.1:6443'], '/')).toThrow(/must be an https URL/);
    expect(() => parseJoinArgs(['https://x:6443', '--token', 'ABCDEF.0123456789abcdef'], '/')).toThrow(/--token must be a bootstrap token/);
    expect(() => parseJoinArgs(['https://x:6443', '--ca-cert-hash', 'md5:abc'], '/')).toThrow(/--ca-cert-hash must be sha256/);
    expect(() => parseJoinArgs(['https://x:6443', '--preset', 'standard'], '/')).toThrow(/--preset must be one of dev, local/);
    expect(() => parseJoinArgs(['https://x:6443', '--node-ip', 'ten'], '/')).toThrow(/--node-ip must be an IP address/);
    expect(() => parseJoinArgs(['https://x:6443', '--node-name', 'Worker_1'], '/')).toThrow(/--node-name must be a DNS subdomain/);
    expect(() => parseJoinArgs(['https://x:6443', 'extra'], '/')).toThrow(/unexpected argument "extra"/);
  });
});

describe('the CA pin', () => {
  it('is the sha256 of the CA’s public key (SubjectPublicKeyInfo, DER), as the kubeadm docs compute it with openssl', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-pin-'));
    try {
      const { caPem } = ensurePki(dir, '127.0.0.1');
      const publicKey = execFileSync('openssl', ['x509', '-pubkey', '-noout'], { input: caPem });
      const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: publicKey });
      const digest = execFileSync('openssl', ['dgst', '-sha256', '-hex'], { input: der }).toString().trim().split(' ').at(-1);
      expect(caCertHash(caPem)).toBe(digest);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('skiff token create --ttl', () => {
  it('reads seconds, minutes, hours and 0 for never', () => {
    expect(parseTtl('24h')).toBe(86_400);
    expect(parseTtl('90m')).toBe(5_400);
    expect(parseTtl('3600s')).toBe(3_600);
    expect(parseTtl('0')).toBe(0);
    expect(() => parseTtl('1d')).toThrow(/--ttl must be a duration such as 24h/);
  });
});
