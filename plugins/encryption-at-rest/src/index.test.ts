import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Kernel } from '@skiff/kernel';
import storePlugin, { openLmdbStore, type LmdbStore } from '@skiff/store';
import plugin, { encryptionRules, RuleSealer } from './index.js';

const dirs: string[] = [];
const stores: LmdbStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-encryption-'));
  dirs.push(dir);
  return dir;
};
const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const aesgcm = (...keys: [string, number][]) => ({ aesgcm: { keys: keys.map(([name, byte]) => ({ name, secret: key(byte) })) } });
const sealer = (...providers: object[]) => new RuleSealer(encryptionRules([{ resources: ['secrets'], providers }]));

const VALUE = 'hunter2-the-secret-value';
const secret = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'default' },
  data: { password: Buffer.from(VALUE).toString('base64') },
  stringData: undefined,
});
const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain', namespace: 'default' }, data: { note: 'visible-configmap-value' } };

async function open(path: string, providers?: object[]) {
  const store = await openLmdbStore({ path, compactionIntervalMs: 0, sealer: providers ? sealer(...providers) : undefined });
  stores.push(store);
  return store;
}
async function close(store: LmdbStore) {
  stores.splice(stores.indexOf(store), 1);
  await store.close();
}
/** Every byte of every file of the store, as a copy taken off the machine would have them. */
const fileBytes = (path: string) => Buffer.concat(readdirSync(path).map((file) => readFileSync(join(path, file))));

describe('encryption at rest', () => {
  it('keeps Secret values out of the LMDB files, plain and base64, while reads, lists and watches see them', async () => {
    const path = tmp();
    const store = await open(path, [aesgcm(['key1', 1]), { identity: {} }]);
    const created = await store.create('/registry/secrets/default/db', secret('db'));
    await store.update('/registry/secrets/default/db', { ...secret('db'), metadata: { ...secret('db').metadata, labels: { v: '2' } } });
    await store.create('/registry/configmaps/default/plain', configMap);
    expect((await store.get('/registry/secrets/default/db'))?.object.data).toEqual(secret('db').data);
    expect((await store.list('/registry/secrets/')).items).toHaveLength(1);
    expect((await store.list('/registry/secrets/', { revision: created.revision })).items[0]?.object.metadata.labels).toBeUndefined();
    const abort = new AbortController();
    const events = [];
    for await (const event of store.watch('/registry/secrets/', 0, abort.signal)) {
      events.push(event);
      if (events.length === 2) abort.abort();
    }
    const password = (object: unknown) => (object as { data?: { password?: string } } | undefined)?.data?.password;
    expect(events.map((e) => [e.type, password(e.object), password(e.prevObject)])).toEqual([
      ['ADDED', secret('db').data.password, undefined],
      ['MODIFIED', secret('db').data.password, secret('db').data.password],
    ]);
    await close(store);
    const bytes = fileBytes(path);
    expect(bytes.includes(VALUE)).toBe(false);
    expect(bytes.includes(Buffer.from(VALUE).toString('base64'))).toBe(false);
    expect(bytes.includes('k8s:enc:aesgcm:v1:key1:')).toBe(true);
    expect(bytes.includes('visible-configmap-value')).toBe(true);
  });

  it('seals plain values at start, rotates to a new first key, and decrypts everything when identity comes first', async () => {
    const path = tmp();
    const plain = await open(path);
    await plain.create('/registry/secrets/default/old', secret('old'));
    await close(plain);

    const first = await open(path, [aesgcm(['key1', 1]), { identity: {} }]);
    expect(await first.resealStale()).toEqual({ objects: 1, events: 1 });
    expect(await first.resealStale()).toEqual({ objects: 0, events: 0 });
    await close(first);

    const rotated = await open(path, [aesgcm(['key2', 2], ['key1', 1])]);
    expect(await rotated.resealStale()).toEqual({ objects: 1, events: 1 });
    expect((await rotated.get('/registry/secrets/default/old'))?.object.data).toEqual(secret('old').data);
    await close(rotated);

    const onlyNew = await open(path, [aesgcm(['key2', 2])]);
    expect((await onlyNew.get('/registry/secrets/default/old'))?.object.data).toEqual(secret('old').data);
    await close(onlyNew);

    const wrong = await open(path, [aesgcm(['key3', 3])]);
    await expect(wrong.get('/registry/secrets/default/old')).rejects.toThrow(
      'the value at "/registry/secrets/default/old" cannot be decrypted: it was sealed with k8s:enc:aesgcm:v1:key2: and no configured provider has that key',
    );
    await close(wrong);

    const none = await open(path);
    await expect(none.get('/registry/secrets/default/old')).rejects.toThrow('is encrypted and no encryption is configured');
    await close(none);

    const decrypting = await open(path, [{ identity: {} }, aesgcm(['key2', 2])]);
    expect(await decrypting.resealStale()).toEqual({ objects: 1, events: 1 });
    await close(decrypting);
    const plainAgain = await open(path);
    expect((await plainAgain.get('/registry/secrets/default/old'))?.object.data).toEqual(secret('old').data);
  });

  it('refuses a sealed value moved to another key (the key is authenticated)', () => {
    const seal = sealer(aesgcm(['key1', 1]));
    const sealed = seal.seal('/registry/secrets/a/x', Buffer.from('{}'));
    expect(() => seal.open('/registry/secrets/b/x', sealed)).toThrow();
    expect(Buffer.from(seal.open('/registry/secrets/a/x', sealed)).toString()).toBe('{}');
  });

  it('maps resource names to store prefixes', () => {
    const rules = encryptionRules([{ resources: ['secrets', 'widgets.example.com', '*.apps', '*.*'], providers: [{ identity: {} }] }]);
    expect(rules.map((rule) => rule.prefix)).toEqual(['/registry/secrets/', '/registry/example.com/widgets/', '/registry/apps/', '/registry/']);
  });

  it.each([
    [[], 'resources: at least one entry is required'],
    [[{ resources: ['secrets'], providers: [] }], 'resources[0].providers: at least one provider is required'],
    [
      [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: 'k', secret: 'c2hvcnQ=' }] } }] }],
      'resources[0].providers[0].aesgcm.keys[0].secret: must be the base64 of a 16, 24 or 32 byte key',
    ],
    [
      [{ resources: ['secrets'], providers: [{ aescbc: {} }] }],
      'resources[0].providers[0].aescbc: is not supported by this plugin (supported: aesgcm, identity)',
    ],
    [[{ resources: ['*.'], providers: [{ identity: {} }] }], 'resources[0].resources[0]: "*." (every core resource) is not supported'],
  ])('refuses a bad configuration with the field named: %j', (resources, message) => {
    expect(() => encryptionRules(resources)).toThrow(message);
  });

  it('stops the start with one line naming the plugin and the field', async () => {
    const kernel = new Kernel({ config: { logLevel: 'silent' } });
    expect(() => kernel.use(plugin, { resources: [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: 'k', secret: 'x' }] } }] }] })).toThrow(
      /@skiff\/plugin-encryption-at-rest.*resources\[0\]\.providers\[0\]\.aesgcm\.keys\[0\]\.secret/,
    );
  });

  it('generates a key file on first start and seals Secrets through the store plugin', async () => {
    const root = tmp();
    const kernel = new Kernel({ config: { logLevel: 'silent', rootDir: root, dataDir: 'data' } }).use(storePlugin).use(plugin);
    await kernel.start();
    const store = kernel.resolve('store');
    await store.create('/registry/secrets/default/db', secret('db'));
    await kernel.stop();
    const config = readFileSync(join(root, 'data', 'encryption-config.yaml'), 'utf8');
    expect(config).toContain('kind: EncryptionConfiguration');
    expect(fileBytes(join(root, 'data', 'store')).includes(VALUE)).toBe(false);
    writeFileSync(join(root, 'bad.yaml'), 'kind: Other\n');
    const bad = new Kernel({ config: { logLevel: 'silent', rootDir: root, dataDir: 'data' } }).use(storePlugin).use(plugin, { configFile: 'bad.yaml' });
    await expect(bad.start()).rejects.toThrow(/bad\.yaml: expected kind EncryptionConfiguration/);
  });

  it('names a YAML mistake in one line that never quotes the file, where a key may sit', async () => {
    const root = tmp();
    const secretText = key(7);
    const yaml = `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys:\n            - name: key1\n              secret: ${secretText}: oops\n`;
    writeFileSync(join(root, 'broken.yaml'), yaml);
    const kernel = new Kernel({ config: { logLevel: 'silent', rootDir: root, dataDir: 'data' } }).use(storePlugin).use(plugin, { configFile: 'broken.yaml' });
    const failure = await kernel.start().then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).toMatch(/broken\.yaml: .*line 9/);
    expect(failure?.message).not.toContain(secretText);
    expect(failure?.message).not.toContain('\n');
  });
});
