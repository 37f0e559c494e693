import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES, type Event, type Pod } from '@skiff/api';
import { Kernel } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import plugin, { EVENT_REASON, imageTag } from './index.js';

function pod(name: string, image: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'main', image }] } };
}

describe('image tags', () => {
  it('reads the tag, defaulting to latest, and ignores registry ports and digests', () => {
    expect(imageTag('nginx')).toBe('latest');
    expect(imageTag('nginx:1.27')).toBe('1.27');
    expect(imageTag('registry.example:5000/team/web')).toBe('latest');
    expect(imageTag('registry.example:5000/team/web:2.0')).toBe('2.0');
    expect(imageTag('nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31')).toBeUndefined();
  });

  it('checks its options when the plugin loads', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(plugin, { tags: 'latest' })).toThrow('option "tags" must be an array');
  });
});

describe('against a real control plane', () => {
  let controlPlane: ControlPlane;
  beforeAll(async () => {
    controlPlane = await startControlPlane([plugin]);
  });
  afterAll(() => controlPlane?.stop());

  it('records a Warning event on a pod with an unpinned image, and none on a pinned one', async () => {
    const { client } = controlPlane;
    await client.create(RESOURCES.pods, pod('pinned', 'nginx:1.27'), 'default');
    await client.create(RESOURCES.pods, pod('floating', 'nginx'), 'default');
    const event = await waitFor('the UnpinnedImage event', async () => {
      const { items } = await client.list<Event>(RESOURCES.events, 'default');
      return items.find((e) => e.reason === EVENT_REASON && e.involvedObject.name === 'floating');
    });
    expect(event).toMatchObject({ type: 'Warning', message: 'container(s) "main" (nginx) use an image tag that can move; pin a version or a digest' });
    // Pods are handled in order, so the pinned pod was checked before the event above was recorded.
    const { items } = await client.list<Event>(RESOURCES.events, 'default');
    expect(items.filter((e) => e.involvedObject.name === 'pinned')).toEqual([]);
  });
});
