import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generatedFiles, OUTPUTS } from '../../../../scripts/generate-api-types.mjs';
import type { Container, Deployment, Event, EventsV1Event, KubeObject, Pod, ResourceTypes } from '../index.js';
import { BUILTIN_NAMES, RESOURCES } from '../index.js';

describe('generated object types (scripts/generate-api-types.mjs)', () => {
  it('are what the generator writes from the committed facts', async () => {
    const expected = await generatedFiles();
    expect(readFileSync(OUTPUTS.types, 'utf8')).toBe(expected.types);
    expect(readFileSync(OUTPUTS.resources, 'utf8')).toBe(expected.resources);
  });

  it('give every served resource a coordinate and a type', () => {
    const rows = readFileSync(new URL('./api-resources-1.36.txt', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'));
    expect(Object.keys(RESOURCES)).toHaveLength(rows.length);
    expect(RESOURCES.deployments).toEqual({ group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true });
    expect(RESOURCES['events.events.k8s.io'].kind).toBe('Event');
    expect(BUILTIN_NAMES['deployments.apps']).toEqual({ shortNames: ['deploy'], categories: ['all'] });
    const types = readFileSync(OUTPUTS.types, 'utf8');
    const mapped = /export interface ResourceTypes \{([^}]*)\}/.exec(types)?.[1] ?? '';
    expect(mapped.trim().split('\n')).toHaveLength(rows.length);
  });

  it('type objects as the API serves them', () => {
    // Compile-time checks: a kind is a KubeObject, required fields are required, enums admit their values.
    const pod: Pod = { metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'nginx' }], restartPolicy: 'Never' } };
    const asObject: KubeObject = pod;
    const container: Container = pod.spec.containers[0]!;
    const coreEvent: Event = { metadata: {}, involvedObject: {} };
    const eventsEvent: EventsV1Event = { metadata: {}, eventTime: null };
    const byName: ResourceTypes['deployments.apps'] = { metadata: {}, spec: { selector: {}, template: { spec: { containers: [] } } } } satisfies Deployment;
    // @ts-expect-error a container needs its name
    const nameless: Container = { image: 'nginx' };
    expect([asObject, container, coreEvent, eventsEvent, byName, nameless]).toHaveLength(6);
  });
});
