import { describe, expect, it } from 'vitest';
import { ApiError, type KubeObject } from '@skiff/api';
import type { AdmissionRequest } from '@skiff/kernel';
import { CallFailure, type WebhookCaller } from './caller.js';
import type { Webhook } from './configurations.js';
import { runMutating, runValidating, type DispatchContext } from './dispatch.js';
import { compileConditions } from './match-conditions.js';
import { compileMatcher } from './matching.js';

// The dispatcher with callers that answer in-process (the HTTPS exchange itself is tested in
// integration-tests/admission-webhooks.test.ts against a real server).

type Answer = (request: any) => object | Promise<object>;

const calls: Record<string, any[]> = {};

function webhook(name: string, answer: Answer, settings: Partial<Webhook> = {}, index = 0): Webhook {
  calls[name] = [];
  const caller = {
    async post(body: string) {
      const review = JSON.parse(body);
      calls[name]!.push(review.request);
      return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...(await answer(review.request)) } };
    },
  } as unknown as WebhookCaller;
  return {
    uid: `config/${name}/0`,
    configuration: 'config',
    name,
    index,
    matcher: compileMatcher({ rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] }),
    caller,
    reviewVersion: 'v1',
    timeoutSeconds: 10,
    failClosed: true,
    dryRunSafe: true,
    reinvokeIfNeeded: false,
    conditions: [],
    ...settings,
  };
}

function request(overrides: Partial<AdmissionRequest> = {}): AdmissionRequest {
  const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' } };
  return {
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace: 'default',
    name: 'settings',
    object,
    user: { username: 'alice', groups: ['system:authenticated'] },
    dryRun: false,
    get: async () => undefined,
    warnings: [],
    auditAnnotations: {},
    ...overrides,
  };
}

const context: DispatchContext = {
  namespaceLabels: async () => ({}),
  equivalents: () => [],
  logger: { warn() {}, info() {}, debug() {}, error() {}, child: () => context.logger } as unknown as DispatchContext['logger'],
};

const patchOf = (ops: object[]) => ({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
const setLabel = (key: string, value: string) => (req: any) =>
  patchOf(
    req.object.metadata.labels ? [{ op: 'add', path: `/metadata/labels/${key}`, value }] : [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }],
  );

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('mutating webhooks', () => {
  it('apply their JSON patches in order, each seeing the changes before it', async () => {
    const req = request();
    await runMutating([webhook('a', setLabel('a', '1')), webhook('b', setLabel('b', '2'), {}, 1)], req, context);
    expect(req.object!.metadata.labels).toEqual({ a: '1', b: '2' });
    expect(calls.b![0].object.metadata.labels).toEqual({ a: '1' });
    expect(req.auditAnnotations).toEqual({
      'mutation.webhook.admission.k8s.io/round_0_index_0': JSON.stringify({ configuration: 'config', webhook: 'a', mutated: true }),
      'mutation.webhook.admission.k8s.io/round_0_index_1': JSON.stringify({ configuration: 'config', webhook: 'b', mutated: true }),
    });
  });

  it('with reinvocationPolicy IfNeeded are called once more when a later webhook changed the object', async () => {
    const req = request();
    const first = webhook('first', (r) => setLabel('first', String(calls.first!.length))(r), { reinvokeIfNeeded: true });
    const second = webhook('second', setLabel('second', 'yes'), {}, 1);
    await runMutating([first, second], req, context);
    expect(calls.first).toHaveLength(2);
    expect(calls.second).toHaveLength(1);
    expect(req.object!.metadata.labels).toEqual({ first: '2', second: 'yes' });
  });

  it('are not called again when nothing changed after them, or when their policy is Never', async () => {
    const idle = webhook('idle', () => ({ allowed: true }), {}, 1);
    await runMutating([webhook('only', setLabel('x', '1'), { reinvokeIfNeeded: true }), idle], request(), context);
    expect(calls.only).toHaveLength(1);
    await runMutating([webhook('never', setLabel('x', '1')), webhook('later', setLabel('y', '1'), {}, 1)], request(), context);
    expect(calls.never).toHaveLength(1);
  });

  it('a patch that changes nothing does not count as a change', async () => {
    const req = request();
    await runMutating([webhook('noop', () => patchOf([{ op: 'test', path: '/kind', value: 'ConfigMap' }]))], req, context);
    expect(req.auditAnnotations!['mutation.webhook.admission.k8s.io/round_0_index_0']).toContain('"mutated":false');
  });
});

describe('refusals', () => {
  it('carry the webhook status: its code, reason and message prefixed with the webhook name', async () => {
    const denied = webhook('deny.example.com', () => ({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no settings here' } }));
    const err = await refusal(runValidating([denied], request(), context));
    expect(err.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'admission webhook "deny.example.com" denied the request: no settings here',
      reason: 'Forbidden',
      code: 403,
    });
  });

  it('without a status are 400 "without explanation"', async () => {
    const err = await refusal(runMutating([webhook('terse', () => ({ allowed: false }))], request(), context));
    expect(err.status).toBe(400);
    expect(err.message).toBe('admission webhook "terse" denied the request without explanation');
  });

  it('of validating webhooks: they run at once, and the first refusal in order is the answer', async () => {
    const slow = (name: string, allowed: boolean, index: number) =>
      webhook(name, () => new Promise<object>((resolve) => setTimeout(() => resolve({ allowed, status: { message: name } }), 100)), {}, index);
    const started = Date.now();
    const err = await refusal(runValidating([slow('one', true, 0), slow('two', false, 1), slow('three', false, 2)], request(), context));
    expect(Date.now() - started).toBeLessThan(250);
    expect(err.message).toBe('admission webhook "two" denied the request: two');
  });
});

describe('failures', () => {
  const broken = (settings: Partial<Webhook>) =>
    webhook('broken.example.com', () => ({}), {
      caller: {
        post: () => Promise.reject(new CallFailure('Post "https://127.0.0.1:1/x?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused')),
      } as unknown as WebhookCaller,
      ...settings,
    });

  it('with failurePolicy Fail refuse the request with a 500 naming the webhook', async () => {
    const err = await refusal(runValidating([broken({})], request(), context));
    expect(err.status).toBe(500);
    expect(err.message).toBe(
      'Internal error occurred: failed calling webhook "broken.example.com": failed to call webhook: Post "https://127.0.0.1:1/x?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused',
    );
  });

  it('with failurePolicy Ignore let the request through, noted in the audit annotations', async () => {
    const req = request();
    await runValidating([broken({ failClosed: false, index: 3 })], req, context);
    expect(req.auditAnnotations).toEqual({ 'failed-open.validating.webhook.admission.k8s.io/round_0_index_3': 'broken.example.com' });
    const mutating = request();
    await runMutating([broken({ failClosed: false })], mutating, context);
    expect(mutating.auditAnnotations).toEqual({ 'failed-open.mutation.webhook.admission.k8s.io/round_0_index_0': 'broken.example.com' });
  });

  it('an answer for another request is an invalid response', async () => {
    const liar = webhook('liar', () => ({ allowed: true }));
    (liar.caller as any).post = async (body: string) => ({
      apiVersion: JSON.parse(body).apiVersion,
      kind: 'AdmissionReview',
      response: { uid: 'other', allowed: true },
    });
    const err = await refusal(runValidating([liar], request(), context));
    expect(err.message).toMatch(
      /^Internal error occurred: failed calling webhook "liar": received invalid webhook response: expected response\.uid="[0-9a-f-]+", got "other"$/,
    );
  });

  it('a validating webhook may not patch', async () => {
    const err = await refusal(runValidating([webhook('patcher', setLabel('x', 'y'))], request(), context));
    expect(err.message).toContain('validating webhook may not return a patch');
  });

  it('a webhook that speaks no AdmissionReview version we send fails', async () => {
    const err = await refusal(runValidating([webhook('old', () => ({ allowed: true }), { reviewVersion: undefined })], request(), context));
    expect(err.message).toContain('webhook does not accept v1 or v1beta1 AdmissionReview');
  });
});

describe('dry run', () => {
  it('reaches webhooks without side effects with dryRun set', async () => {
    await runValidating([webhook('safe', () => ({ allowed: true }))], request({ dryRun: true }), context);
    expect(calls.safe![0].dryRun).toBe(true);
    expect(calls.safe![0].options).toEqual({ kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', dryRun: ['All'] });
  });

  it('is refused by a webhook with side effects, whatever its failurePolicy, without calling it', async () => {
    const err = await refusal(
      runMutating([webhook('effects', () => ({ allowed: true }), { dryRunSafe: false, failClosed: false })], request({ dryRun: true }), context),
    );
    expect(err.status).toBe(400);
    expect(err.message).toBe('admission webhook "effects" does not support dry run');
    expect(calls.effects).toHaveLength(0);
  });
});

describe('the webhook answer', () => {
  it('warnings go to the client, audit annotations are prefixed with the webhook name', async () => {
    const req = request();
    await runValidating([webhook('chatty.example.com', () => ({ allowed: true, warnings: ['careful'], auditAnnotations: { checked: 'yes' } }))], req, context);
    expect(req.warnings).toEqual(['careful']);
    expect(req.auditAnnotations).toEqual({ 'chatty.example.com/checked': 'yes' });
  });

  it('the review names the request', async () => {
    await runValidating(
      [webhook('reader', () => ({ allowed: true }))],
      request({ operation: 'UPDATE', oldObject: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } } }),
      context,
    );
    expect(calls.reader![0]).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
      requestResource: { group: '', version: 'v1', resource: 'configmaps' },
      name: 'settings',
      namespace: 'default',
      operation: 'UPDATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      oldObject: { metadata: { name: 'settings' } },
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
  });
});

describe('matchConditions', () => {
  const conditions = (...expressions: string[]) => compileConditions(expressions.map((expression, i) => ({ name: `c${i}`, expression })));

  it('all true: the webhook is called; one false: it is not', async () => {
    await runValidating(
      [
        webhook('when-true', () => ({ allowed: true }), {
          conditions: conditions("request.userInfo.username == 'alice'", "object.metadata.name.startsWith('set')"),
        }),
      ],
      request(),
      context,
    );
    expect(calls['when-true']).toHaveLength(1);
    await runValidating(
      [webhook('when-false', () => ({ allowed: false }), { conditions: conditions("request.userInfo.username == 'alice'", "request.operation == 'DELETE'") })],
      request(),
      context,
    );
    expect(calls['when-false']).toHaveLength(0);
  });

  it('see oldObject, null on a create', async () => {
    await runValidating([webhook('old', () => ({ allowed: true }), { conditions: conditions('oldObject == null') })], request(), context);
    expect(calls.old).toHaveLength(1);
  });

  it('an error refuses the request under failurePolicy Fail (403), skips the webhook under Ignore', async () => {
    const failing = conditions('object.spec.missing == 1');
    const err = await refusal(runValidating([webhook('strict', () => ({ allowed: true }), { conditions: failing })], request(), context));
    expect(err.status).toBe(403);
    expect(err.message).toMatch(/^configmaps "settings" is forbidden: expression 'object\.spec\.missing == 1' resulted in error: no such key: spec$/);
    expect(calls.strict).toHaveLength(0);
    await runValidating([webhook('lenient', () => ({ allowed: false }), { conditions: failing, failClosed: false })], request(), context);
    expect(calls.lenient).toHaveLength(0);
  });

  it('a false condition wins over an error', async () => {
    await runValidating([webhook('mixed', () => ({ allowed: false }), { conditions: conditions('object.spec.missing == 1', 'false') })], request(), context);
    expect(calls.mixed).toHaveLength(0);
  });
});
