import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@skiff/apiserver';
import { parseKubeconfig, writeKubeconfig } from '@skiff/client';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from './main.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-cli-kubeconfig-'));
const dataDir = join(dir, 'data');
const pki = ensurePki(dataDir, '127.0.0.1');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  try {
    const result = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, dir);
    return { result, out: out.join('\n'), error: undefined };
  } catch (error) {
    return { result: undefined, out: out.join('\n'), error: (error as Error).message };
  }
}

function subjectOf(certPem: string) {
  return new X509Certificate(certPem).toLegacyObject().subject as Record<string, string | string[]>;
}

describe('skiff kubeconfig user', () => {
  it('prints a kubeconfig with a certificate the cluster CA signed for the user and groups', async () => {
    const { result, out } = await run(
      'kubeconfig',
      'user',
      '--name',
      'jane',
      '--group',
      'devs',
      '--group',
      'ops',
      '--data-dir',
      dataDir,
      '--server',
      'https://api.test:6443',
    );
    expect(result).toEqual({ exitCode: 0 });
    const connection = parseKubeconfig(out, { file: join(dir, 'printed') });
    expect(connection).toMatchObject({ context: 'jane@skiff', server: 'https://api.test:6443', caPem: pki.caPem, namespace: 'default' });
    expect(connection.token).toBeUndefined();
    const certificate = new X509Certificate(connection.certPem!);
    expect(certificate.verify(new X509Certificate(pki.caPem).publicKey)).toBe(true);
    expect(subjectOf(connection.certPem!)).toEqual({ CN: 'jane', O: ['devs', 'ops'] });
    expect(certificate.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    const year = 365 * 24 * 3600_000;
    expect(Math.abs(Date.parse(certificate.validTo) - Date.now() - year)).toBeLessThan(60_000);
    expect(connection.keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
  });

  it("takes the server from the data dir's admin.kubeconfig and honours --expiration-seconds", async () => {
    writeKubeconfig(join(dataDir, 'admin.kubeconfig'), { server: 'https://127.0.0.1:7443', caPem: pki.caPem, token: 't' });
    const { out } = await run('kubeconfig', 'user', '--name', 'bot', '--data-dir', dataDir, '--expiration-seconds', '600');
    const connection = parseKubeconfig(out, { file: join(dir, 'printed') });
    expect(connection.server).toBe('https://127.0.0.1:7443');
    expect(subjectOf(connection.certPem!)).toEqual({ CN: 'bot' });
    const left = Date.parse(new X509Certificate(connection.certPem!).validTo) - Date.now();
    expect(left).toBeGreaterThan(590_000);
    expect(left).toBeLessThanOrEqual(600_000);
  });

  it("finds the data dir in the folder's config file", async () => {
    writeFileSync(join(dir, 'skiff.config.json'), JSON.stringify({ dataDir: 'data' }));
    const { out } = await run('kubeconfig', 'user', '--name', 'cfg');
    expect(parseKubeconfig(out, { file: join(dir, 'printed') }).caPem).toBe(pki.caPem);
    rmSync(join(dir, 'skiff.config.json'));
  });

  it('says in one line what is wrong', async () => {
    expect((await run('kubeconfig', 'user', '--name', 'x', '--data-dir', join(dir, 'nowhere'))).error).toBe(
      `no cluster CA in ${join(dir, 'nowhere')} (pki/ca.crt and pki/ca.key): start the cluster there once (skiff up), or name its data dir with --data-dir`,
    );
    expect((await run('kubeconfig', 'user', '--data-dir', dataDir)).error).toBe(
      "skiff kubeconfig user needs --name NAME (the user's name, the certificate's CN)",
    );
    expect((await run('kubeconfig', 'user', '--name', 'x', '--expiration-seconds', '1h')).error).toBe(
      '--expiration-seconds must be a positive whole number (got "1h")',
    );
    expect((await run('kubeconfig', 'user', '--name', 'x', '--group', '')).error).toBe('--group must not be empty');
    expect((await run('kubeconfig')).error).toBe('skiff kubeconfig needs a subcommand: user');
    expect((await run('kubeconfig', 'admin')).error).toBe('unknown kubeconfig subcommand "admin" (known: user)');
    expect((await run('kubeconfig', 'user', '--name', 'x', '--groups', 'a')).error).toMatch(/Unknown option '--groups'/);
  });
});
