import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Kernel, type AuditEvent } from '@skiff/kernel';
import plugin, { auditLine, DEFAULT_POLICY, parsePolicy } from './index.js';
import { LogFile } from './writer.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-audit-'));
  dirs.push(dir);
  return dir;
};

const event = (overrides: Partial<AuditEvent> = {}): AuditEvent => ({
  auditID: 'a1',
  stage: 'ResponseComplete',
  verb: 'create',
  requestURI: '/api/v1/namespaces/team/configmaps',
  user: { username: 'jane', groups: ['devs', 'system:authenticated'] },
  sourceIPs: ['127.0.0.1'],
  objectRef: { resource: 'configmaps', namespace: 'team', name: 'c', apiGroup: '', apiVersion: 'v1' },
  responseStatus: { code: 201 },
  requestObject: { metadata: { name: 'c', managedFields: [{ manager: 'kubectl' }] }, data: { k: 'v' } },
  responseObject: { metadata: { name: 'c', managedFields: [{ manager: 'kubectl' }] }, data: { k: 'v' } },
  requestReceivedTimestamp: '2026-01-01T00:00:00.000Z',
  stageTimestamp: '2026-01-01T00:00:00.001Z',
  ...overrides,
});
const parsed = (line: string | undefined) => (line === undefined ? undefined : JSON.parse(line));

describe('audit policy', () => {
  it('records metadata of every answered request by default, and nothing at RequestReceived', () => {
    const line = parsed(auditLine(DEFAULT_POLICY, event()));
    expect(line).toMatchObject({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      verb: 'create',
      user: { username: 'jane' },
      responseStatus: { code: 201 },
    });
    expect(line.requestObject).toBeUndefined();
    expect(line.responseObject).toBeUndefined();
    expect(auditLine(DEFAULT_POLICY, event({ stage: 'RequestReceived' }))).toBeUndefined();
  });

  it('takes the first matching rule: users, groups, verbs, resources, subresources, namespaces, paths', () => {
    const policy = parsePolicy({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitManagedFields: true,
      rules: [
        { level: 'None', users: ['system:kube-scheduler'] },
        { level: 'None', verbs: ['get'], resources: [{ group: '', resources: ['pods/log'] }] },
        { level: 'RequestResponse', resources: [{ group: '', resources: ['configmaps'] }], namespaces: ['team'] },
        { level: 'Request', userGroups: ['devs'], resources: [{ group: 'apps', resources: ['*'] }] },
        { level: 'None', nonResourceURLs: ['/healthz*'] },
        { level: 'Metadata' },
      ],
    });
    const level = (e: AuditEvent) => parsed(auditLine(policy, e))?.level ?? 'None';
    expect(level(event({ user: { username: 'system:kube-scheduler', groups: [] } }))).toBe('None');
    expect(level(event({ verb: 'get', objectRef: { resource: 'pods', subresource: 'log', namespace: 'team', apiGroup: '', apiVersion: 'v1' } }))).toBe('None');
    expect(level(event({ verb: 'get', objectRef: { resource: 'pods', namespace: 'team', apiGroup: '', apiVersion: 'v1' } }))).toBe('Metadata');
    const full = parsed(auditLine(policy, event()));
    expect(full.level).toBe('RequestResponse');
    expect(full.requestObject).toEqual({ metadata: { name: 'c' }, data: { k: 'v' } });
    expect(full.responseObject).toEqual({ metadata: { name: 'c' }, data: { k: 'v' } });
    expect(level(event({ objectRef: { resource: 'configmaps', namespace: 'other', apiGroup: '', apiVersion: 'v1' } }))).toBe('Metadata');
    const apps = parsed(auditLine(policy, event({ objectRef: { resource: 'deployments', namespace: 'x', apiGroup: 'apps', apiVersion: 'v1' } })));
    expect(apps.level).toBe('Request');
    expect(apps.requestObject).toBeDefined();
    expect(apps.responseObject).toBeUndefined();
    expect(level(event({ verb: 'get', requestURI: '/healthz/ready', objectRef: undefined }))).toBe('None');
    expect(level(event({ verb: 'get', requestURI: '/version', objectRef: undefined }))).toBe('Metadata');
  });

  it("accepts kube-apiserver's ResponseStarted stage in omitStages (policies written for upstream load unchanged)", () => {
    const policy = parsePolicy({ omitStages: ['RequestReceived', 'ResponseStarted'], rules: [{ level: 'Metadata', omitStages: ['ResponseStarted'] }] });
    expect(parsed(auditLine(policy, event()))?.level).toBe('Metadata');
    expect(auditLine(policy, event({ stage: 'RequestReceived' }))).toBeUndefined();
  });

  it('matches `resource/*` to the resource itself and its subresources, as kube-apiserver does', () => {
    const policy = parsePolicy({ rules: [{ level: 'Request', resources: [{ group: '', resources: ['pods/*'] }] }, { level: 'Metadata' }] });
    const level = (e: AuditEvent) => parsed(auditLine(policy, e))?.level;
    expect(level(event({ objectRef: { resource: 'pods', namespace: 'team', name: 'p', apiGroup: '', apiVersion: 'v1' } }))).toBe('Request');
    expect(level(event({ objectRef: { resource: 'pods', subresource: 'log', namespace: 'team', apiGroup: '', apiVersion: 'v1' } }))).toBe('Request');
    expect(level(event({ objectRef: { resource: 'podtemplates', namespace: 'team', apiGroup: '', apiVersion: 'v1' } }))).toBe('Metadata');
  });

  it('stops the start with one line for a policy file that does not parse', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'policy.yaml'), 'rules:\n  - level: Metadata: x\n');
    const kernel = new Kernel({ config: { logLevel: 'silent', rootDir: dir, dataDir: 'data' } }).use(plugin, { policyFile: 'policy.yaml' });
    const failure = await kernel.start().then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).toMatch(/policy\.yaml: .*line 2/);
    expect(failure?.message).not.toContain('\n');
  });

  it('loads with no options (the default policy)', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin)).not.toThrow();
  });

  it.each([
    [{ rules: [] }, 'policy: rules: at least one rule is required'],
    [{ rules: [{ level: 'Everything' }] }, 'policy: rules[0].level: expected one of None, Metadata, Request, RequestResponse'],
    [{ rules: [{ level: 'None', omitStages: ['Later'] }] }, 'policy: rules[0].omitStages: unknown stage "Later"'],
    [{ kind: 'Other', rules: [{ level: 'None' }] }, 'policy: kind must be Policy'],
  ])('refuses a bad policy with the field named: %j', (policy, message) => {
    expect(() => parsePolicy(policy)).toThrow(message);
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { policy })).toThrow(message);
  });
});

describe('audit log file', () => {
  it('appends JSON lines with mode 0600 and rotates, keeping maxBackups files', async () => {
    const dir = tmp();
    // Someone else's file beside the log, named like a backup: rotation leaves it alone.
    writeFileSync(join(dir, 'audit-0-old.log'), 'not ours\n', { mode: 0o600 });
    const errors: unknown[] = [];
    const file = new LogFile({ path: join(dir, 'audit.log'), maxBytes: 1000, maxBackups: 2, onError: (err) => errors.push(err) });
    for (let batch = 0; batch < 5; batch++) {
      for (let i = 0; i < 10; i++) file.append(JSON.stringify({ batch, i, pad: 'x'.repeat(50) }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    file.close();
    expect(errors).toEqual([]);
    const files = readdirSync(dir).sort();
    expect(files.filter((f) => f.startsWith('audit-20'))).toHaveLength(2);
    expect(readFileSync(join(dir, 'audit-0-old.log'), 'utf8')).toBe('not ours\n');
    for (const name of files) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    const lines = files.filter((name) => name !== 'audit-0-old.log').flatMap((name) => readFileSync(join(dir, name), 'utf8').trim().split('\n'));
    expect(lines.every((line) => JSON.parse(line).pad)).toBe(true);
  });
});
