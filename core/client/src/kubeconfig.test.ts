import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ClientError } from './errors.js';
import { buildKubeconfig, parseKubeconfig, readKubeconfig, writeKubeconfig } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (text: string) => Buffer.from(text).toString('base64');

const MULTI_CONTEXT = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: ${b64('CA PEM')}
- name: lab
  cluster:
    server: https://lab.example:6443
    certificate-authority: certs/lab-ca.pem
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate-data: ${b64('CERT PEM')}
    client-key-data: ${b64('KEY PEM')}
- name: robot
  user:
    token: abc123
- name: from-files
  user:
    client-certificate: certs/user.crt
    client-key: /KEY_ABS
    tokenFile: certs/token
contexts:
- name: dev
  context:
    cluster: local
    user: admin
    namespace: team-a
- name: lab
  context:
    cluster: lab
    user: from-files
- name: bot
  context:
    cluster: local
    user: robot
`;

describe('parseKubeconfig', () => {
  it('resolves the current context with embedded data', () => {
    const connection = parseKubeconfig(MULTI_CONTEXT, { file: join(dir, 'config') });
    expect(connection).toEqual({
      context: 'dev',
      server: 'https://127.0.0.1:6443',
      caPem: 'CA PEM',
      certPem: 'CERT PEM',
      keyPem: 'KEY PEM',
      namespace: 'team-a',
    });
  });

  it('reads referenced files relative to the kubeconfig and honours insecure-skip-tls-verify', () => {
    const certs = join(dir, 'certs');
    mkdirSync(certs);
    writeFileSync(join(certs, 'lab-ca.pem'), 'LAB CA');
    writeFileSync(join(certs, 'user.crt'), 'USER CERT');
    writeFileSync(join(certs, 'token'), 'file-token\n');
    const keyFile = join(dir, 'user.key');
    writeFileSync(keyFile, 'USER KEY');
    const path = join(dir, 'config');
    writeFileSync(path, MULTI_CONTEXT.replace('/KEY_ABS', keyFile));

    expect(readKubeconfig(path, 'lab')).toEqual({
      context: 'lab',
      server: 'https://lab.example:6443',
      caPem: 'LAB CA',
      insecureSkipTlsVerify: true,
      certPem: 'USER CERT',
      keyPem: 'USER KEY',
      token: 'file-token',
      namespace: 'default',
    });
  });

  it('takes a bearer token', () => {
    expect(parseKubeconfig(MULTI_CONTEXT, { file: 'config', context: 'bot' })).toMatchObject({ token: 'abc123', namespace: 'default' });
  });

  it('names the missing context and the ones available', () => {
    expect(() => parseKubeconfig(MULTI_CONTEXT, { file: 'config', context: 'prod' })).toThrow(
      'kubeconfig config has no context "prod" (contexts: dev, lab, bot)',
    );
  });

  it('says which field is wrong', () => {
    const cases: [string, string][] = [
      ['clusters: [', 'invalid kubeconfig k:'],
      ['contexts: []', 'no context given and current-context is not set'],
      ['current-context: a\ncontexts: [{name: a, context: {cluster: c}}]', 'names cluster "c", which is not in clusters'],
      ['current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "https://h"}}]', 'names user "u"'],
      [
        'current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, cluster: {server: 6443}}]',
        'clusters[c].cluster.server must be a string',
      ],
      ['current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, cluster: {}}]', 'clusters[c].cluster.server is missing'],
      [
        'current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, cluster: {server: "https://h", certificate-authority: nope.pem}}]',
        'cannot read',
      ],
    ];
    for (const [text, message] of cases) {
      const attempt = () => parseKubeconfig(text, { file: 'k' });
      expect(attempt).toThrow(ClientError);
      expect(attempt).toThrow(message);
    }
  });

  it('reports an unreadable file with its code', () => {
    try {
      readKubeconfig(join(dir, 'absent'));
      expect.unreachable();
    } catch (err) {
      expect((err as ClientError).code).toBe('SKIFF_ERR_CLIENT_KUBECONFIG_READ');
    }
  });
});

describe('buildKubeconfig', () => {
  it('writes a kubeconfig that reads back the same, owner-readable only', () => {
    const path = join(dir, 'written', 'kubeconfig');
    const spec = { server: 'https://10.0.0.1:6443', caPem: 'CA', token: 't0k', certPem: 'C', keyPem: 'K', namespace: 'ns1' };
    writeKubeconfig(path, spec);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readKubeconfig(path)).toEqual({ context: 'skiff', ...spec });
  });

  it('names cluster, user and context as asked and omits what is not given', () => {
    const text = buildKubeconfig({ server: 'https://h', insecureSkipTlsVerify: true, clusterName: 'c1', userName: 'u1', contextName: 'x1' });
    expect(text).not.toContain('token');
    expect(text).not.toContain('certificate-authority-data');
    expect(parseKubeconfig(text, { file: 'k' })).toEqual({ context: 'x1', server: 'https://h', insecureSkipTlsVerify: true, namespace: 'default' });
  });
});
