import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect, type ConnectionOptions } from 'node:tls';
import { parse } from 'yaml';
import { Kubectl, REPO_ROOT, SKIFF_BIN, startSkiff, tempDir, type RunningSkiff } from './harness.js';

// One cluster for every case. Its data dir starts out too open (0755), as an old one might be.
const dataDir = tempDir('security');
let skiff: RunningSkiff;
let ca: Buffer;
let server: URL;

beforeAll(async () => {
  chmodSync(dataDir, 0o755);
  skiff = await startSkiff(['--data-dir', dataDir]);
  const config = parse(readFileSync(skiff.kubeconfig, 'utf8'));
  ca = Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64');
  server = new URL(skiff.server);
});
afterAll(async () => {
  await skiff?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A raw HTTPS GET that trusts the cluster CA and sends no credentials unless given a header. */
function get(path: string, headers: Record<string, string> = {}): Promise<{ status?: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server), { ca, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Completes a TLS handshake with the API server, or rejects with the error the server caused. */
function handshake(options: ConnectionOptions): Promise<{ protocol: string | null; cipher: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.hostname, port: Number(server.port), ca, servername: 'localhost', ...options }, () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().name });
      socket.end();
    });
    socket.on('error', reject);
  });
}

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('anonymous requests', () => {
  it('may read the health checks and the version', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/readyz?verbose', '/healthz/ping', '/version', '/version/']) {
      const { status, body } = await get(path);
      expect(status, path).toBe(200);
      if (path.startsWith('/version')) expect(JSON.parse(body), path).toMatchObject({ major: '1', gitVersion: expect.stringMatching(/^v1\./) });
      else expect(body, path).toBe('ok');
    }
  });

  it('are forbidden discovery and resources, with a Status naming system:anonymous', async () => {
    const discovery = await get('/api');
    expect(discovery.status).toBe(403);
    expect(JSON.parse(discovery.body)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'forbidden: User "system:anonymous" cannot get path "/api"',
    });
    const namespaces = await get('/api/v1/namespaces');
    expect(namespaces.status).toBe(403);
    expect(JSON.parse(namespaces.body)).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: expect.stringContaining('namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces"'),
    });
  });

  it('are not what a wrong bearer token gets: that is 401, even for /healthz', async () => {
    for (const path of ['/healthz', '/api/v1/namespaces']) {
      const { status, body } = await get(path, { authorization: 'Bearer not-a-real-token' });
      expect(status, path).toBe(401);
      expect(JSON.parse(body), path).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
  });

  it('leave the admin kubeconfig working for kubectl', async () => {
    const kubectl = new Kubectl(skiff.kubeconfig);
    try {
      expect(await kubectl.ok('get', 'namespace', 'default', '-o', 'name')).toBe('namespace/default\n');
      expect(await kubectl.ok('get', '--raw', '/api')).toContain('"kind":"APIVersions"');
    } finally {
      kubectl.cleanup();
    }
  });
});

describe('TLS', () => {
  it('refuses TLS 1.1', async () => {
    // SECLEVEL=0 lets this client offer TLS 1.1 at all, so the refusal is the server's.
    await expect(handshake({ minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' })).rejects.toMatchObject({
      code: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    });
  });

  it('refuses CBC and static-RSA suites on TLS 1.2', async () => {
    for (const ciphers of ['AES128-SHA256', 'ECDHE-RSA-AES128-SHA256', 'AES256-GCM-SHA384']) {
      await expect(handshake({ maxVersion: 'TLSv1.2', ciphers }), ciphers).rejects.toMatchObject({ code: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE' });
    }
  });

  it('accepts ECDHE with AEAD on TLS 1.2, and TLS 1.3', async () => {
    expect(await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' })).toEqual({
      protocol: 'TLSv1.2',
      cipher: 'ECDHE-RSA-AES128-GCM-SHA256',
    });
    expect(await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-CHACHA20-POLY1305' })).toEqual({
      protocol: 'TLSv1.2',
      cipher: 'ECDHE-RSA-CHACHA20-POLY1305',
    });
    expect((await handshake({})).protocol).toBe('TLSv1.3');
  });
});

describe('file permissions', () => {
  it('tightens the too-open data dir to 0700 and says so', () => {
    expect(modeOf(dataDir)).toBe('700');
    expect(skiff.stderr()).toContain('was mode 0755; made it 0700 (owner only)');
  });

  it('writes the store, keys, token file and kubeconfig readable by the owner only', () => {
    for (const file of ['store/data.mdb', 'store/lock.mdb', 'pki/ca.key', 'pki/apiserver.key', 'tokens.csv', 'admin.kubeconfig']) {
      expect(modeOf(join(dataDir, file)), file).toBe('600');
    }
    for (const dir of ['store', 'pki', 'nodes']) expect(modeOf(join(dataDir, dir)), dir).toBe('700');
  });
});

describe('skiff up --help', () => {
  it('prints the usage and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const child = spawn(process.execPath, [SKIFF_BIN, 'up', flag], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, flag).toBe(0);
      expect(stdout, flag).toMatch(/^usage: skiff up /);
      expect(stdout, flag).toContain('--data-dir');
    }
  });
});
