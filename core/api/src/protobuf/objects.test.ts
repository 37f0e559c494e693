import { describe, expect, it } from 'vitest';
import { decodeEnvelope } from './envelope.js';
import { decodeProtobufObject, encodeProtobufObject, encodeProtobufWatchEvent, protobufMessageOf } from './objects.js';
import { WireReader } from './wire.js';

describe('built-in objects as protobuf bodies', () => {
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

describe('protobuf watch frames', () => {
  it('frame a WatchEvent (typed in the watched group version) holding the enveloped object, behind a 4-byte length', () => {
    const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', resourceVersion: '7' }, spec: { replicas: 2 } };
    const frame = encodeProtobufWatchEvent('apps/v1', 'MODIFIED', object);
    const length = new DataView(frame.buffer, frame.byteOffset).getUint32(0);
    expect(length).toBe(frame.length - 4);
    const envelope = decodeEnvelope(frame.subarray(4));
    expect([envelope.apiVersion, envelope.kind]).toEqual(['apps/v1', 'WatchEvent']);
    const reader = new WireReader(envelope.raw);
    const event: { type?: string; raw?: Uint8Array } = {};
    while (!reader.done) {
      const { field, wireType } = reader.tag();
      if (field === 1) event.type = reader.string();
      else if (field === 2) {
        const extension = new WireReader(reader.bytesField());
        extension.tag();
        event.raw = extension.bytesField();
      } else reader.skip(wireType);
    }
    expect(event.type).toBe('MODIFIED');
    expect(decodeProtobufObject(event.raw!)).toEqual(object);
  });

  it('carry an ERROR event’s Status, a meta/v1 kind in every group version', () => {
    expect(protobufMessageOf('apps/v1', 'Status')).toBe('k8s.io.apimachinery.pkg.apis.meta.v1.Status');
    const status = { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', code: 410, reason: 'Expired' };
    const frame = encodeProtobufWatchEvent('v1', 'ERROR', status as never);
    const reader = new WireReader(decodeEnvelope(frame.subarray(4)).raw);
    let raw: Uint8Array | undefined;
    while (!reader.done) {
      const { field, wireType } = reader.tag();
      if (field !== 2) {
        reader.skip(wireType);
        continue;
      }
      const extension = new WireReader(reader.bytesField());
      extension.tag();
      raw = extension.bytesField();
    }
    expect(decodeProtobufObject(raw!)).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
  });
});
