import { ApiError, type FlowSchema, type PriorityLevelConfiguration } from '@skiff/api';
import type { FlowControlGrant } from '@skiff/kernel';
import { describe, expect, it } from 'vitest';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap.js';
import { FlowController, maxSeatsOf } from './controller.js';
import { FLOW_SCHEMA_UID_HEADER, PRIORITY_LEVEL_UID_HEADER } from './names.js';
import { flowRequest, serviceAccount, type RequestShape } from './test-support.js';
import { estimateSeats } from './work-estimate.js';

const ADMIN: RequestShape = { user: 'admin', groups: ['system:masters', 'system:authenticated'] };

const level = (name: string, spec: PriorityLevelConfiguration['spec'], uid = `uid-${name}`): PriorityLevelConfiguration => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name, uid },
  spec,
});

/** A schema sending every request of `user` to `levelName`. */
const schemaFor = (user: string, levelName: string, matchingPrecedence = 500): FlowSchema => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'FlowSchema',
  metadata: { name: `for-${user}`, uid: `uid-for-${user}` },
  spec: {
    priorityLevelConfiguration: { name: levelName },
    matchingPrecedence,
    distinguisherMethod: { type: 'ByUser' },
    rules: [
      {
        subjects: [{ kind: 'User', user: { name: user } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      },
    ],
  },
});

const bootstrapSchemas = [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS];
const bootstrapLevels = [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS];

/** Lets admissions started so far reach their queues (classification awaits the object count). */
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

describe('FlowController', () => {
  it('shares the server seats by nominalConcurrencyShares, rounding up', () => {
    const controller = new FlowController({ serverConcurrencyLimit: 600, queueWaitLimitMs: 15_000 });
    const limits = Object.fromEntries(controller.states().map((state) => [state.name, state.exempt ? 'exempt' : state.concurrencyLimit]));
    // Kubernetes' default 600 seats over 245 shares (exempt 0, catch-all 5, system 30, node-high 40, leader-election 10,
    // workload-high 40, workload-low 100, global-default 20).
    expect(limits).toEqual({
      'catch-all': 13,
      exempt: 'exempt',
      'global-default': 49,
      'leader-election': 25,
      'node-high': 98,
      system: 74,
      'workload-high': 98,
      'workload-low': 245,
    });
  });

  it('never queues an exempt request, and leaves long-running requests alone', async () => {
    const controller = new FlowController({ serverConcurrencyLimit: 1, queueWaitLimitMs: 1000 });
    const grants = await Promise.all(
      Array.from({ length: 50 }, () => controller.admit(flowRequest({ ...ADMIN, verb: 'list', resource: 'pods', objects: 100_000 }))),
    );
    expect(grants.every((grant) => grant !== undefined)).toBe(true);
    expect(controller.states().find((state) => state.name === 'exempt')).toMatchObject({ executing: 50, waiting: 0 });
    grants.forEach((grant) => grant!.release());
    expect(controller.states().find((state) => state.name === 'exempt')).toMatchObject({ executing: 0 });
    expect(await controller.admit(flowRequest({ verb: 'get', resource: 'pods', subresource: 'log', namespace: 'x', name: 'p' }))).toBeUndefined();
    expect(await controller.admit(flowRequest({ verb: 'create', resource: 'pods', subresource: 'exec', namespace: 'x', name: 'p' }))).toBeUndefined();
  });

  it('answers 429 TooManyRequests with a Retry-After when a flow fills its queue, while another flow still gets in first', async () => {
    let now = 0;
    const controller = new FlowController({ serverConcurrencyLimit: 600, queueWaitLimitMs: 60_000, clock: () => now });
    controller.configure(
      [...bootstrapSchemas, schemaFor('flooder', 'tight'), schemaFor('reader', 'tight')],
      [
        ...bootstrapLevels,
        level('tight', {
          type: 'Limited',
          limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 1, queueLengthLimit: 3 } } },
        }),
      ],
    );
    // 600 seats × 1 share of 246: 3 seats; a request may take one of them (handSize 1), lists included.
    const list = () => controller.admit(flowRequest({ user: 'flooder', verb: 'list', resource: 'pods', namespace: 'a', objects: 3000 }));
    const running = [(await list())!, (await list())!, (await list())!];
    const get = (user: string) => controller.admit(flowRequest({ user, verb: 'get', resource: 'pods', namespace: 'a', name: 'p' }));
    const queued = [get('flooder'), get('flooder'), get('flooder')];
    const rejected = await refusal(get('flooder'));
    expect(rejected.status).toBe(429);
    expect(rejected.toStatus()).toMatchObject({ reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } });
    expect(rejected.message).toContain('priority level "tight"');
    expect(rejected.message).toContain('queueLengthLimit 3');

    const reader = get('reader');
    await tick();
    now = 1000;
    running[0]!.release();
    // The lists ran for a second: the flooder's backlog is due after the reader's request.
    const first = await Promise.race([reader.then(() => 'reader'), ...queued.map((grant) => grant.then(() => 'flooder'))]);
    expect(first).toBe('reader');
    (await reader)!.release();
    for (const grant of [...running.slice(1), ...queued]) (await grant)!.release();
    expect(controller.states().find((state) => state.name === 'tight')).toMatchObject({
      concurrencyLimit: 3,
      dispatched: 7,
      rejected: 1,
      executing: 0,
      waiting: 0,
    });
  });

  it('rejects at once on a level whose limitResponse is Reject', async () => {
    const controller = new FlowController({ serverConcurrencyLimit: 245, queueWaitLimitMs: 60_000 });
    controller.configure(
      [...bootstrapSchemas, schemaFor('bob', 'strict')],
      [...bootstrapLevels, level('strict', { type: 'Limited', limited: { nominalConcurrencyShares: 2, limitResponse: { type: 'Reject' } } })],
    );
    const bob = flowRequest({ user: 'bob', path: '/version' });
    const held = [await controller.admit(bob), await controller.admit(bob)];
    const err = await refusal(controller.admit(bob));
    expect(err.message).toContain('limitResponse type Reject');
    held.forEach((grant) => grant!.release());
    expect(await controller.admit(bob)).toBeDefined();
  });

  it('names the FlowSchema and priority level in the response headers', async () => {
    const controller = new FlowController({ serverConcurrencyLimit: 100, queueWaitLimitMs: 1000 });
    controller.configure(
      [...bootstrapSchemas, schemaFor('carol', 'global-default')],
      bootstrapLevels.map((object) => ({ ...object, metadata: { ...object.metadata, uid: `uid-${object.metadata.name}` } })),
    );
    const request = flowRequest({ user: 'carol', verb: 'get', resource: 'pods', namespace: 'x', name: 'p' });
    (await controller.admit(request))!.release();
    expect(request.responseHeaders).toEqual({ [FLOW_SCHEMA_UID_HEADER]: 'uid-for-carol', [PRIORITY_LEVEL_UID_HEADER]: 'uid-global-default' });
  });

  it('applies a changed configuration live, skips dangling schemas, and keeps the mandatory levels', async () => {
    const controller = new FlowController({ serverConcurrencyLimit: 100, queueWaitLimitMs: 1000 });
    const dangling = schemaFor('dave', 'missing', 50);
    controller.configure([dangling], []);
    expect(controller.hasLevel('missing')).toBe(false);
    expect(controller.states().map((state) => state.name)).toEqual(['catch-all', 'exempt']);
    const request = flowRequest({ user: 'dave', verb: 'get', resource: 'pods', namespace: 'x', name: 'p' });
    const grant = (await controller.admit(request)) as FlowControlGrant;
    grant.release();
    // Neither the dangling schema nor the (deleted) global-default: the mandatory catch-all.
    expect(controller.states().find((state) => state.name === 'catch-all')).toMatchObject({ dispatched: 1 });

    controller.configure([dangling], [level('missing', { type: 'Limited', limited: { nominalConcurrencyShares: 10, limitResponse: { type: 'Reject' } } })]);
    (await controller.admit(request))!.release();
    expect(controller.states().find((state) => state.name === 'missing')).toMatchObject({ dispatched: 1, concurrencyLimit: 67 });
  });

  it('rejects the waiting requests when it stops', async () => {
    const controller = new FlowController({ serverConcurrencyLimit: 1, queueWaitLimitMs: 60_000 });
    const alice = flowRequest({ verb: 'get', resource: 'pods', namespace: 'x', name: 'p' });
    await controller.admit(alice);
    const waiting = controller.admit(alice);
    await tick();
    controller.stop();
    expect((await refusal(waiting)).toStatus()).toMatchObject({ code: 503, message: 'the API server is stopping' });
    expect(await controller.admit(alice)).toBeUndefined();
  });
});

describe('seats of a request', () => {
  it("caps a level's requests at 15 % of its seats and at its seats over a hand of queues, between 1 and 10", () => {
    const workloadLow = SUGGESTED_PRIORITY_LEVELS.find((object) => object.metadata.name === 'workload-low')!;
    const catchAll = MANDATORY_PRIORITY_LEVELS.find((object) => object.metadata.name === 'catch-all')!;
    expect([245, 98, 49, 41, 9, 1].map((limit) => maxSeatsOf(workloadLow, limit))).toEqual([10, 10, 8, 6, 1, 1]);
    // A level that does not queue has no hand: only the share counts.
    expect([13, 3, 100].map((limit) => maxSeatsOf(catchAll, limit))).toEqual([2, 1, 10]);
  });

  const seats = (shape: RequestShape) => estimateSeats(flowRequest(shape), 10);

  it('takes a seat per hundred objects a list reads, ten at most', async () => {
    expect(await seats({ verb: 'list', resource: 'pods', objects: 0 })).toBe(1);
    expect(await seats({ verb: 'list', resource: 'pods', objects: 120 })).toBe(3);
    expect(await seats({ verb: 'list', resource: 'pods', objects: 3000 })).toBe(10);
    expect(await seats({ verb: 'list', resource: 'pods', objects: 3000, query: { limit: '100' } })).toBe(2);
    expect(await seats({ verb: 'list', resource: 'pods', objects: 3000, query: { limit: '100', labelSelector: 'app=x' } })).toBe(10);
    expect(await seats({ verb: 'list', resource: 'pods', objects: 250, query: { fieldSelector: 'spec.nodeName=n' } })).toBe(5);
    expect(await estimateSeats(flowRequest({ verb: 'list', resource: 'pods', objects: 3000 }), 4)).toBe(4);
  });

  it('takes one seat for everything else', async () => {
    expect(await seats({ verb: 'list', resource: 'pods', name: 'one', objects: 3000 })).toBe(1);
    expect(await seats({ verb: 'get', resource: 'pods', name: 'one', objects: 3000 })).toBe(1);
    expect(await seats({ verb: 'watch', resource: 'pods', objects: 3000 })).toBe(1);
    expect(await seats({ verb: 'list', resource: 'widgets' })).toBe(1);
    expect(await seats({ ...serviceAccount('a', 'b'), verb: 'create', resource: 'pods', objects: 3000 })).toBe(1);
  });

  it('counts a watch that asks for its initial events like a read of the collection', async () => {
    expect(await seats({ verb: 'watch', resource: 'pods', objects: 450, query: { sendInitialEvents: 'true' } })).toBe(5);
  });
});
