import { request as httpsRequest } from 'node:https';
import { decodeProtobufObject } from '@skiff/api/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const IPS = '/apis/networking.k8s.io/v1/ipaddresses';
// What client-go's metadata client sends (kube-controller-manager's garbage collector and quota controller).
const LIST_ACCEPT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const OBJECT_ACCEPT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const JSON_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

const ipAddress = (ip: string) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IPAddress',
  metadata: { name: ip, labels: { owner: 'test' } },
  spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'web' } },
});

/** The first `count` length-prefixed protobuf frames of a watch, each decoded. */
function protobufWatch(path: string, accept: string, count: number): Promise<{ type: string; object: any }[]> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.info.url}${path}`, { headers: { accept, authorization: 'Bearer admin-token' }, ca: server.info.caPem }, (res) => {
      let buffer = Buffer.alloc(0);
      const events: { type: string; object: any }[] = [];
      res.on('data', (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        while (buffer.length >= 4 && buffer.length >= 4 + buffer.readUInt32BE(0)) {
          const frame = buffer.subarray(4, 4 + buffer.readUInt32BE(0));
          buffer = buffer.subarray(4 + frame.length);
          events.push(decodeWatchEvent(frame));
          if (events.length === count) {
            req.destroy();
            resolve(events);
          }
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

/** A meta.k8s.io WatchEvent message: type (1) and the raw object (2, a RawExtension whose field 1 is the bytes). */
function decodeWatchEvent(frame: Buffer): { type: string; object: any } {
  const fields = new Map<number, Buffer>();
  for (let i = 0; i < frame.length; ) {
    const tag = frame[i++]!;
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = frame[i++]!;
      length |= (byte & 0x7f) << shift;
      if (byte < 0x80) break;
    }
    fields.set(tag >> 3, frame.subarray(i, i + length));
    i += length;
  }
  const raw = fields.get(2)!;
  let offset = 1;
  while (raw[offset]! >= 0x80) offset++;
  return { type: fields.get(1)!.toString(), object: decodeProtobufObject(raw.subarray(offset + 1)) };
}

describe('metadata-only answers (as=PartialObjectMetadata)', () => {
  it('lists IPAddresses, and any other kind, as a PartialObjectMetadataList in protobuf or JSON', async () => {
    expect((await server.request('POST', IPS, { body: ipAddress('10.96.0.10') })).status).toBe(201);
    const protobuf = await server.request('GET', IPS, { headers: { accept: LIST_ACCEPT } });
    expect(protobuf.status).toBe(200);
    expect(protobuf.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    const list = decodeProtobufObject(protobuf.raw) as any;
    expect(list).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList' });
    expect(list.items.map((item: any) => item.metadata.name)).toEqual(['10.96.0.10']);
    expect(list.items[0].spec).toBeUndefined();

    const json = await server.request('GET', '/api/v1/namespaces', { headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
    expect(json.json.kind).toBe('PartialObjectMetadataList');
    expect(json.json.items[0]).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: expect.objectContaining({ name: 'default' }) });
  });

  it('answers one object with its metadata, and 406 for a list form asked of one object', async () => {
    const one = await server.request('GET', `${IPS}/10.96.0.10`, { headers: { accept: JSON_ACCEPT } });
    expect(one.json).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: expect.objectContaining({ name: '10.96.0.10', labels: { owner: 'test' } }),
    });
    const mismatch = await server.request('GET', `${IPS}/10.96.0.10`, {
      headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
    });
    expect(mismatch.status).toBe(406);
    expect(mismatch.json.reason).toBe('NotAcceptable');
  });

  it('streams a metadata-only watch as PartialObjectMetadata, in JSON and protobuf frames', async () => {
    const watch = server.watch(`${IPS}?watch=true&resourceVersion=0`, { headers: { accept: JSON_ACCEPT } });
    try {
      const event = await watch.next((e) => e.type === 'ADDED');
      expect(event.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: expect.objectContaining({ name: '10.96.0.10' }) });
    } finally {
      watch.close();
    }
    const frames = await protobufWatch(`${IPS}?watch=true&resourceVersion=0`, OBJECT_ACCEPT, 1);
    expect(frames[0]).toMatchObject({
      type: 'ADDED',
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: '10.96.0.10' } },
    });
    expect(frames[0]!.object.spec).toBeUndefined();
  });
});
