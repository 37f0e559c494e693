import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { Kubectl, startSkiff, tempDir, type RunningSkiff } from './harness.js';

let skiff: RunningSkiff;
let kubectl: Kubectl;
const dataDir = tempDir('errors');

beforeAll(async () => {
  skiff = await startSkiff(['--data-dir', dataDir]);
  kubectl = new Kubectl(skiff.kubeconfig);
});
afterAll(async () => {
  await skiff?.stop();
  kubectl?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

const deployment = (replicas: unknown, name = 'bad') => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${JSON.stringify(replicas)}
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
      - name: web
        image: nginx
`;

describe('bad input gets a Status naming the field', () => {
  it('rejects a wrong field type with 400 BadRequest', async () => {
    const result = await kubectl.run(['create', '-f', '-'], { input: deployment('three') });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Error from server (BadRequest)');
    expect(result.stderr).toContain('spec.replicas');
  });

  it('rejects an unknown field under strict validation with 400', async () => {
    const result = await kubectl.run(['create', '-f', '-'], { input: deployment(1).replace('replicas: 1', 'replicas: 1\n  replicaz: 2') });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('unknown field "spec.replicaz"');
  });

  it('rejects an invalid value with 422 Invalid', async () => {
    const result = await kubectl.run(['create', '-f', '-'], { input: deployment(-1) });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('The Deployment "bad" is invalid');
    expect(result.stderr).toContain('spec.replicas: Invalid value: -1: must be greater than or equal to 0');
  });

  it('rejects an invalid name with 422 naming metadata.name', async () => {
    const result = await kubectl.run(['create', '-f', '-'], { input: deployment(1, 'Bad_Name') });
    expect(result.stderr).toMatch(/metadata\.name: Invalid value: "Bad_Name"/);
  });

  it('answers 404 NotFound for a missing object and 409 AlreadyExists for a duplicate', async () => {
    const missing = await kubectl.run(['get', 'pod', 'nope']);
    expect(missing.stderr).toContain('Error from server (NotFound): pods "nope" not found');
    await kubectl.ok('create', 'namespace', 'twice');
    const again = await kubectl.run(['create', 'namespace', 'twice']);
    expect(again.stderr).toContain('Error from server (AlreadyExists): namespaces "twice" already exists');
  });
});

describe('authentication', () => {
  // kubectl with no credential at all prompts for a username, so the kubectl case uses a wrong token;
  // the tokenless case is the raw HTTPS request below.
  it('rejects kubectl with a wrong token with 401', async () => {
    const config = parse(readFileSync(skiff.kubeconfig, 'utf8'));
    for (const user of config.users) user.user = { token: 'not-a-real-token' };
    const wrong = join(dataDir, 'wrong-token.kubeconfig');
    writeFileSync(wrong, stringify(config));
    const result = await new Kubectl(wrong).run(['get', 'pods']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('error: You must be logged in to the server');
  });

  it('answers a tokenless HTTPS request as system:anonymous with a 403 Status, as Kubernetes does', async () => {
    const config = parse(readFileSync(skiff.kubeconfig, 'utf8'));
    const ca = Buffer.from(config.clusters[0].cluster['certificate-authority-data'], 'base64');
    const { status, body } = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
      const req = request(`${skiff.server}/api/v1/namespaces/default/pods`, { ca }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(JSON.parse(body)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: expect.stringContaining('pods is forbidden: User "system:anonymous" cannot list resource "pods"'),
    });
  });
});
