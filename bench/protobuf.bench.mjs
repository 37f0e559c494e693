#!/usr/bin/env node
// Protobuf encoding of a large list (what client-go informers ask for): a PodList of PROTOBUF_PODS pods
// (default 3,000) encoded with @skiff/api/protobuf, against JSON.stringify of the same list as the
// baseline in the same run. Prints ms per list and MB/s. Needs `npm run build` first.
import { encodeProtobufObject } from '@skiff/api/protobuf';

const PODS = Number(process.env.PROTOBUF_PODS ?? 3000);
const ROUNDS = Number(process.env.PROTOBUF_ROUNDS ?? 10);

const pod = (i) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `p${i}`,
    namespace: 'flood',
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    resourceVersion: String(1000 + i),
    creationTimestamp: '2026-11-26T17:00:00Z',
    labels: { app: 'flood', index: String(i) },
    annotations: { note: 'x'.repeat(512) },
    managedFields: [
      {
        manager: 'probe',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-26T17:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:index': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    ],
  },
  spec: {
    containers: [
      {
        name: 'c',
        image: 'busybox',
        command: ['sleep', '3600'],
        env: [{ name: 'A', value: 'b'.repeat(64) }],
        resources: { requests: { cpu: '100m', memory: '64Mi' } },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'Always',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    enableServiceLinks: true,
  },
  status: {
    phase: 'Pending',
    qosClass: 'Burstable',
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: '2026-11-26T17:00:01Z' }],
  },
});

const list = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '5000' }, items: Array.from({ length: PODS }, (_, i) => pod(i)) };

function measure(name, encode) {
  let bytes = 0;
  for (let i = 0; i < 2; i++) encode(); // warm-up
  const started = performance.now();
  for (let i = 0; i < ROUNDS; i++) bytes = encode().length;
  const ms = (performance.now() - started) / ROUNDS;
  console.log(`${name.padEnd(28)} ${ms.toFixed(1).padStart(8)} ms per list  ${(bytes / 1e6).toFixed(2)} MB  ${(bytes / 1e3 / ms).toFixed(0).padStart(5)} MB/s`);
  return ms;
}

console.log(`PodList of ${PODS} pods, ${ROUNDS} rounds`);
const json = measure('JSON.stringify (baseline)', () => JSON.stringify(list));
const protobuf = measure('protobuf encode', () => encodeProtobufObject(list));
console.log(`protobuf / JSON: ${(protobuf / json).toFixed(2)}×`);
