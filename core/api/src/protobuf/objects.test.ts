import { describe, expect, it } from 'vitest';
import {
  decodeProtobufObject,
  encodeProtobufList,
  encodeProtobufListItem,
  encodeProtobufObject,
  encodeProtobufWatchEvent,
  protobufMessageOf,
} from './objects.js';
import type { KubeObject } from '../types.js';
import { WIRE_TYPE, WireReader } from './wire.js';

describe('built-in objects as protobuf bodies', () => {
  it('writes a list from its items encoded one by one exactly as it writes the whole list', () => {
    const items = ['a', 'b', 'c'].map((name, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', resourceVersion: String(10 + i), labels: { app: name } },
      data: { key: name.repeat(100), ünïcode: 'välue' },
    }));
    const list = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '12', continue: 'next' }, items };
    const assembled = encodeProtobufList(
      list,
      items.map((item) => encodeProtobufListItem('v1', 'ConfigMapList', item)),
    );
    expect(Buffer.from(assembled).equals(Buffer.from(encodeProtobufObject(list)))).toBe(true);
    expect(decodeProtobufObject(assembled)).toMatchObject({
      kind: 'ConfigMapList',
      metadata: { continue: 'next' },
      items: [{ metadata: { name: 'a' } }, {}, {}],
    });
    expect(() => encodeProtobufListItem('v1', 'NoSuchList', items[0]!)).toThrow(/no protobuf definition for NoSuchList/);
  });

  it('finds the message of a kind by its apiVersion', () => {
    expect(protobufMessageOf('v1', 'Namespace')).toBe('k8s.io.api.core.v1.Namespace');
    expect(protobufMessageOf('apps/v1', 'Deployment')).toBe('k8s.io.api.apps.v1.Deployment');
    expect(protobufMessageOf('v1', 'Deployment')).toBeUndefined();
  });

  it('round-trips a pod with volumes (an inline field), ports (a list map), resources (quantities) and probes (int-or-string)', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, creationTimestamp: '2024-01-02T03:04:05Z' },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            ports: [{ containerPort: 80, protocol: 'TCP' }],
            resources: { requests: { cpu: '100m', memory: '64Mi' } },
            readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
          },
        ],
        volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
        terminationGracePeriodSeconds: 30,
      },
    };
    const body = encodeProtobufObject(pod);
    expect(Array.from(body.subarray(0, 4))).toEqual([0x6b, 0x38, 0x73, 0x00]);
    expect(decodeProtobufObject(body)).toEqual(pod);
  });

  it('carries Secret data as bytes and back to base64', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { token: Buffer.from('hunter2').toString('base64') }, type: 'Opaque' };
    expect(decodeProtobufObject(encodeProtobufObject(secret))).toEqual(secret);
  });

  it("leaves out the zero values Go's protobuf writes where its JSON says omitempty, keeping set pointers", () => {
    const written = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', generateName: '', selfLink: '' },
      spec: { replicas: 0, paused: false },
    };
    expect(decodeProtobufObject(encodeProtobufObject(written))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { replicas: 0 },
    });
  });

  it('names what it cannot read', () => {
    expect(() => decodeProtobufObject(Buffer.from('{}'))).toThrow('does not start with the protobuf magic');
    const unknownKind = encodeProtobufObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } });
    unknownKind[unknownKind.indexOf(0x4e)] = 0x58; // "Namespace" → "Xamespace"
    expect(() => decodeProtobufObject(unknownKind)).toThrow('no protobuf definition for Xamespace in v1');
  });
});

/**
 * Reads a watch frame as client-go does: after the 4-byte length, the bytes go straight into a
 * metav1.WatchEvent (its raw protobuf serializer adds no magic and no envelope). Strict: anything but
 * `type` (1) and `object` (2), both length-delimited, is an error — the "k8s\0" magic, for one, reads as
 * field 13 opening a group, which Go skips into the bytes after it and then fails on ("wiretype end group
 * for non-group", "unexpected EOF", an illegal wire type: whichever the bytes happen to give).
 */
function readWatchFrame(frame: Uint8Array): { type: string; object: KubeObject } {
  expect(new DataView(frame.buffer, frame.byteOffset).getUint32(0)).toBe(frame.length - 4);
  const reader = new WireReader(frame, 4);
  const event: { type?: string; raw?: Uint8Array } = {};
  while (!reader.done) {
    const { field, wireType } = reader.tag();
    if (wireType !== WIRE_TYPE.LENGTH_DELIMITED || (field !== 1 && field !== 2))
      throw new Error(`a WatchEvent has no field ${field} of wire type ${wireType} (at the frame's start: a magic or an envelope?)`);
    if (field === 1) event.type = reader.string();
    else {
      const extension = new WireReader(reader.bytesField());
      expect(extension.tag()).toEqual({ field: 1, wireType: WIRE_TYPE.LENGTH_DELIMITED });
      event.raw = extension.bytesField();
      expect(extension.done).toBe(true);
    }
  }
  return { type: event.type!, object: decodeProtobufObject(event.raw!) };
}

describe('protobuf watch frames', () => {
  it('are a 4-byte length and the bare WatchEvent, whose object is the enveloped object', () => {
    const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', resourceVersion: '7' }, spec: { replicas: 2 } };
    const frame = encodeProtobufWatchEvent('MODIFIED', object);
    expect(frame[4]).toBe(0x0a); // field 1 (type), length-delimited: no "k8s\0" before it
    expect(readWatchFrame(frame)).toEqual({ type: 'MODIFIED', object });
  });

  it('carry a pod, a BOOKMARK and an ERROR event’s Status (a meta/v1 kind in every group version)', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'echo1',
        namespace: 'default',
        uid: '6f1c2a4e-0d1b-4c55-9a3e-2b7f1e0c9d11',
        resourceVersion: '25',
        creationTimestamp: '2025-11-25T21:00:05Z',
      },
      spec: { containers: [{ name: 'echo1', image: 'skiff.local/busybox:1', args: ['sh', '-c', 'cat'], stdin: true, stdinOnce: true }] },
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-11-25T21:00:05Z' }] },
    };
    expect(readWatchFrame(encodeProtobufWatchEvent('ADDED', pod))).toEqual({ type: 'ADDED', object: pod });
    const bookmark = { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '30', annotations: { 'k8s.io/initial-events-end': 'true' } } };
    expect(readWatchFrame(encodeProtobufWatchEvent('BOOKMARK', bookmark))).toEqual({ type: 'BOOKMARK', object: bookmark });
    expect(protobufMessageOf('apps/v1', 'Status')).toBe('k8s.io.apimachinery.pkg.apis.meta.v1.Status');
    const status = { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', code: 410, reason: 'Expired' };
    const error = readWatchFrame(encodeProtobufWatchEvent('ERROR', status as never));
    expect(error.type).toBe('ERROR');
    expect(error.object).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
  });
});
