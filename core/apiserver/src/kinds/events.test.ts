import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/cluster.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ testDefinitions: false });
});
afterAll(async () => {
  await server?.stop();
});

const CORE = '/api/v1/namespaces/default/events';
const EVENTS_V1 = '/apis/events.k8s.io/v1/namespaces/default/events';

/** An event as kube-scheduler's events.k8s.io recorder writes it. */
const scheduled = (name: string) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2024-05-01T11:58:00.123456Z',
  reportingController: 'default-scheduler',
  reportingInstance: 'default-scheduler-node-1',
  action: 'Binding',
  reason: 'Scheduled',
  regarding: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u-1', apiVersion: 'v1' },
  note: 'Successfully assigned default/web-1 to node-1',
  type: 'Normal',
});

describe('events.k8s.io/v1 and core v1 Events are one stored resource', () => {
  it('shows an event written through events.k8s.io/v1 as a core Event, fields mapped', async () => {
    const created = await server.request('POST', EVENTS_V1, { body: scheduled('web-1.a') });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'events.k8s.io/v1', note: 'Successfully assigned default/web-1 to node-1' });
    const core = await server.request('GET', `${CORE}/web-1.a`);
    expect(core.status).toBe(200);
    expect(core.json).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'Pod', name: 'web-1', uid: 'u-1' },
      message: 'Successfully assigned default/web-1 to node-1',
      reportingComponent: 'default-scheduler',
      reportingInstance: 'default-scheduler-node-1',
      eventTime: '2024-05-01T11:58:00.123456Z',
      action: 'Binding',
    });
    expect(core.json.metadata.resourceVersion).toBe(created.json.metadata.resourceVersion);
    const listed = await server.request('GET', CORE);
    expect(listed.json.items.map((item: any) => item.metadata.name)).toContain('web-1.a');
  });

  it('shows a core Event through events.k8s.io/v1, the deprecated fields holding the old ones', async () => {
    const body = {
      metadata: { name: 'old-style', namespace: 'default' },
      involvedObject: { kind: 'Node', name: 'node-1', namespace: 'default' },
      reason: 'Starting',
      message: 'Starting kubelet.',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-05-01T11:00:00Z',
      lastTimestamp: '2024-05-01T11:05:00Z',
      count: 3,
      type: 'Normal',
    };
    expect((await server.request('POST', CORE, { body })).status).toBe(201);
    const v1 = await server.request('GET', `${EVENTS_V1}/old-style`);
    expect(v1.json).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      regarding: body.involvedObject,
      note: 'Starting kubelet.',
      deprecatedSource: body.source,
      deprecatedFirstTimestamp: body.firstTimestamp,
      deprecatedLastTimestamp: body.lastTimestamp,
      deprecatedCount: 3,
      eventTime: null,
    });
    const list = await server.request('GET', EVENTS_V1);
    expect(list.json.kind).toBe('EventList');
    expect(list.json.apiVersion).toBe('events.k8s.io/v1');
    expect(list.json.items.map((item: any) => item.metadata.name)).toEqual(expect.arrayContaining(['old-style', 'web-1.a']));
  });

  it('selects an events.k8s.io event by the core field source, which falls back to its reporting controller', async () => {
    const event = scheduled('web-2.source');
    expect((await server.request('POST', EVENTS_V1, { body: { ...event, regarding: { ...event.regarding, name: 'web-2' } } })).status).toBe(201);
    const selected = await server.request('GET', `${CORE}?fieldSelector=${encodeURIComponent('source=default-scheduler')}`);
    expect(selected.json.items.map((item: any) => item.metadata.name)).toContain('web-2.source');
    const other = await server.request('GET', `${CORE}?fieldSelector=${encodeURIComponent('source=kubelet')}`);
    expect(other.json.items.map((item: any) => item.metadata.name)).not.toContain('web-2.source');
  });

  it('selects by events.k8s.io’s field labels, and refuses others', async () => {
    const byRegarding = await server.request(
      'GET',
      `${EVENTS_V1}?fieldSelector=${encodeURIComponent('regarding.name=web-1,reportingController=default-scheduler')}`,
    );
    expect(byRegarding.status).toBe(200);
    expect(byRegarding.json.items.map((item: any) => item.metadata.name)).toEqual(['web-1.a']);
    const unsupported = await server.request('GET', `${EVENTS_V1}?fieldSelector=involvedObject.name%3Dweb-1`);
    expect(unsupported.status).toBe(400);
    expect(unsupported.json.message).toBe('field label not supported: involvedObject.name');
  });

  it('holds events.k8s.io writes to its stricter rules, naming the core fields as upstream does', async () => {
    const { reportingController: _controller, ...withoutController } = scheduled('bad');
    const invalid = await server.request('POST', EVENTS_V1, { body: { ...withoutController, deprecatedCount: 2, type: 'Info' } });
    expect(invalid.status).toBe(422);
    expect(invalid.json.details.causes.map((cause: any) => `${cause.field}: ${cause.message}`)).toEqual([
      'reportingController: Required value',
      expect.stringMatching(/^reportingController: Invalid value: "": name part must be non-empty/),
      expect.stringMatching(/^reportingController: Invalid value: "": name part must consist/),
      'type: Invalid value: "": has invalid value: Info',
      'count: Invalid value: "": needs to be unset',
    ]);
    const current = (await server.request('GET', `${EVENTS_V1}/web-1.a`)).json;
    const changed = await server.request('PUT', `${EVENTS_V1}/web-1.a`, { body: { ...current, note: 'other' } });
    expect(changed.status).toBe(422);
    expect(changed.json.message).toContain('message: Invalid value: "other": field is immutable');
    const series = { count: 2, lastObservedTime: '2024-05-01T11:59:00.000000Z' };
    const counted = await server.request('PUT', `${EVENTS_V1}/web-1.a`, { body: { ...current, series } });
    expect(counted.status, counted.text).toBe(200);
    expect(counted.json.series).toEqual(series);
  });

  it('leaves metadata.generation alone on updates of a core Event, as upstream’s e2e test compares', async () => {
    const created = (await server.request('GET', `${CORE}/old-style`)).json;
    const series = { count: 100, lastObservedTime: '2017-09-19T13:49:16.000000Z' };
    const updated = await server.request('PUT', `${CORE}/old-style`, { body: { ...created, series, message: 'patched' } });
    expect(updated.status).toBe(200);
    expect(updated.json.metadata.generation).toBe(created.metadata.generation);
    const { resourceVersion: _a, managedFields: _b, ...before } = created.metadata;
    const { resourceVersion: _c, managedFields: _d, ...after } = updated.json.metadata;
    expect(after).toEqual(before);
  });

  it('streams core Events to an events.k8s.io/v1 watch in its shape', async () => {
    const watch = server.watch(`${EVENTS_V1}?watch=true&fieldSelector=${encodeURIComponent('regarding.name=watched')}`);
    try {
      await watch.response;
      const body = {
        metadata: { name: 'watched.1', namespace: 'default' },
        involvedObject: { kind: 'Pod', name: 'watched', namespace: 'default' },
        message: 'seen',
      };
      expect((await server.request('POST', CORE, { body })).status).toBe(201);
      const event = await watch.next((e) => e.type === 'ADDED');
      expect(event.object).toMatchObject({ apiVersion: 'events.k8s.io/v1', metadata: { name: 'watched.1' }, note: 'seen', regarding: { name: 'watched' } });
    } finally {
      watch.close();
    }
  });
});
