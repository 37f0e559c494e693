import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type CustomResourceDefinition, type KubeObject } from '@skiff/api';
import { ensurePki } from '@skiff/apiserver';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin from '../index.js';

// A CRD with the Webhook conversion strategy in a real control plane (requests through the whole pipeline, API
// server and this plugin from source), its webhook a real HTTPS server here
// converting as upstream's e2e converter does (v1 `hostPort: "h:p"` is v2 `host` and `port`), as the two
// conformance tests drive it: a v1 object read as v2, and lists of objects stored in both versions.

const GROUP = 'stable.example.com';
const dir = mkdtempSync(join(tmpdir(), 'apiextensions-served-conversion-'));
let server: Server;
let port = 0;
let caBundle = '';
let cluster: ControlPlane;
let failing = false;
let reviews = 0;

function convert(object: Record<string, any>, to: string): Record<string, any> {
  const { hostPort, host, port: p, ...rest } = object;
  if (to === `${GROUP}/v2` && hostPort !== undefined) {
    const [h, q] = String(hostPort).split(':');
    return { ...rest, apiVersion: to, host: h, port: q };
  }
  if (to === `${GROUP}/v1` && host !== undefined) return { ...rest, apiVersion: to, hostPort: `${host}:${p}` };
  return { ...object, apiVersion: to };
}

const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
const versions = (storage: 'v1' | 'v2') => ['v1', 'v2'].map((name) => ({ name, served: true, storage: name === storage, schema }));
const type = (version: string) => ({ group: GROUP, version, resource: 'crontabs', kind: 'Crontab', namespaced: true });
type Crontab = KubeObject & Record<string, any>;
const cr = (name: string): KubeObject =>
  ({ apiVersion: `${GROUP}/v1`, kind: 'Crontab', metadata: { name, namespace: 'default' }, hostPort: 'localhost:8080' }) as KubeObject;

beforeAll(async () => {
  const pki = ensurePki(dir, '127.0.0.1');
  caBundle = Buffer.from(pki.caPem).toString('base64');
  server = createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      reviews++;
      const { request } = JSON.parse(body);
      const result = failing ? { status: 'Failure', message: 'the converter is down' } : { status: 'Success' };
      const convertedObjects = failing ? [] : request.objects.map((o: Record<string, any>) => convert(o, request.desiredAPIVersion));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: request.uid, convertedObjects, result } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  cluster = await startControlPlane([plugin]);
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `crontabs.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'crontabs', singular: 'crontab', kind: 'Crontab', listKind: 'CrontabList' },
      versions: versions('v1'),
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { url: `https://127.0.0.1:${port}/crdconvert`, caBundle } },
      },
    },
  };
  await cluster.client.create(RESOURCES.customresourcedefinitions, crd);
  await waitFor('the CRD served', () => cluster.client.list(type('v2'), 'default'), { timeoutMs: 20_000 });
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('Webhook conversion of custom resources', () => {
  it('reads a v1 object as v2 through the webhook, with its own metadata', async () => {
    const created = await cluster.client.create(type('v1'), cr('cr-instance-1'), 'default');
    const v2 = await cluster.client.get<Crontab>(type('v2'), 'cr-instance-1', 'default');
    expect(v2).toMatchObject({ apiVersion: `${GROUP}/v2`, host: 'localhost', port: '8080' });
    expect(v2.hostPort).toBeUndefined();
    expect(v2.metadata).toEqual(created.metadata);
  });

  it('lists objects stored in v1 and in v2 as either version after the storage version changed', async () => {
    const crd = await cluster.client.get<CustomResourceDefinition>(RESOURCES.customresourcedefinitions, `crontabs.${GROUP}`);
    await cluster.client.update(RESOURCES.customresourcedefinitions, { ...crd, spec: { ...crd.spec, versions: versions('v2') } });
    // The v2 object is stored as v2: converted on its way in.
    await waitFor('a create after the storage version changed', () => cluster.client.create(type('v1'), cr('cr-instance-2'), 'default'));
    for (const version of ['v1', 'v2']) {
      const list = await cluster.client.list<Crontab>(type(version), 'default');
      expect(list.items.map((item) => item.metadata.name).sort()).toEqual(['cr-instance-1', 'cr-instance-2']);
      for (const item of list.items) {
        expect(item.apiVersion).toBe(`${GROUP}/${version}`);
        if (version === 'v1') expect(item).toMatchObject({ hostPort: 'localhost:8080' });
        else expect(item).toMatchObject({ host: 'localhost', port: '8080' });
      }
    }
  });

  it('converts watch events', async () => {
    const abort = new AbortController();
    const events = cluster.client.watch<Crontab>(type('v1'), 'default', { signal: abort.signal });
    const seen: Record<string, any>[] = [];
    for await (const event of events) {
      seen.push(event.object as Record<string, any>);
      if (seen.length === 2) break;
    }
    abort.abort();
    expect(seen.map((o) => [o.apiVersion, o.hostPort])).toEqual([
      [`${GROUP}/v1`, 'localhost:8080'],
      [`${GROUP}/v1`, 'localhost:8080'],
    ]);
  });

  it('answers a failed conversion with a 500 saying why', async () => {
    failing = true;
    try {
      const before = reviews;
      // cr-instance-2 is stored as v2.
      const failure = await cluster.client.get(type('v1'), 'cr-instance-2', 'default').catch((err: unknown) => err);
      expect(failure).toMatchObject({
        status: 500,
        message: `Internal error occurred: conversion webhook for ${GROUP}/v2, Kind=Crontab failed: the converter is down`,
      });
      expect(reviews).toBe(before + 1);
    } finally {
      failing = false;
    }
  });
});
