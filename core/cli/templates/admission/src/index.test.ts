import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Pod } from '@skiff/api';
import { Kernel } from '@skiff/kernel';
import { admissionRequest, admit, startTestCluster, type TestCluster } from '@skiff/testing';
import plugin from './index.js';

function pod(name: string, labels: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
  };
}

/** A kernel with only this plugin: its taps run without a cluster, in milliseconds. */
function kernelWith(options: Record<string, unknown>): Kernel {
  return new Kernel({ config: { logLevel: 'silent' } }).use(plugin, options);
}

describe('the admission taps', () => {
  it('rejects a pod without the label, saying why', async () => {
    await expect(admit(kernelWith({}), admissionRequest({ object: pod('web') }))).rejects.toThrow(
      'pods "web" is forbidden: pods must carry the label "team"',
    );
  });

  it('admits a pod that carries the label, unchanged', async () => {
    const admitted = await admit(kernelWith({}), admissionRequest({ object: pod('web', { team: 'payments' }) }));
    expect(admitted?.metadata.labels).toEqual({ team: 'payments' });
  });

  it('fills the label in when a default value is configured', async () => {
    const admitted = await admit(kernelWith({ label: 'owner', defaultValue: 'platform' }), admissionRequest({ object: pod('web') }));
    expect(admitted?.metadata.labels).toEqual({ owner: 'platform' });
  });

  it('checks its options when the plugin loads', () => {
    expect(() => kernelWith({ label: 5 })).toThrow('option "label" must be a string (got 5)');
  });
});

describe('in a whole cluster', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ plugins: [[plugin, { message: 'ask the platform team which team label to use' }]] });
  });
  afterAll(() => cluster?.stop());

  it('rejects a pod over HTTPS with the plugin\'s message, and admits a labelled one', async () => {
    await expect(cluster.client.create(RESOURCES.pods, pod('unlabelled'), 'default')).rejects.toThrow(
      'pods "unlabelled" is forbidden: ask the platform team which team label to use',
    );
    const created = await cluster.client.create(RESOURCES.pods, pod('labelled', { team: 'payments' }), 'default');
    expect(created.metadata.uid).toBeTruthy();
  });
});
