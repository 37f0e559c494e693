import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isApiError, type FlowSchema, type PriorityLevelConfiguration, type UserInfo } from '@skiff/api';
import type { ApiClient, ApiResponse } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap.js';
import apf from './index.js';
import {
  AUTO_UPDATE_ANNOTATION,
  DUMP_PRIORITY_LEVELS_PATH,
  FLOW_SCHEMA_UID_HEADER,
  FLOW_SCHEMAS,
  PRIORITY_LEVEL_UID_HEADER,
  PRIORITY_LEVELS,
} from './names.js';

const names = (objects: readonly { metadata: { name?: string } }[]) => objects.map((object) => object.metadata.name!).sort();

async function exists(client: ApiClient, type: typeof FLOW_SCHEMAS, name: string): Promise<boolean> {
  try {
    await client.get(type, name);
    return true;
  } catch (err) {
    if (isApiError(err, 'NotFound')) return false;
    throw err;
  }
}

describe('API Priority and Fairness in a control plane', () => {
  let plane: ControlPlane;
  let dataDir: string;
  const start = () => startControlPlane([[apf, { serverConcurrencyLimit: 50 }]], { dataDir });

  /** A GET through the whole pipeline as `user`, the way a client with a token would send it. */
  async function getAs(user: UserInfo, path: string): Promise<ApiResponse> {
    const handler = plane.kernel.resolve('apiHandler');
    return handler.handle({
      method: 'GET',
      path,
      query: {},
      headers: { authorization: `Bearer ${handler.issueLoopbackToken(user)}` },
      remoteAddress: '127.0.0.1',
    });
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'skiff-apf-'));
    plane = await start();
  });
  afterAll(async () => {
    await plane?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates the mandatory and suggested configuration, annotated for automatic updates', async () => {
    const schemas = (await plane.client.list<FlowSchema>(FLOW_SCHEMAS)).items;
    const levels = (await plane.client.list<PriorityLevelConfiguration>(PRIORITY_LEVELS)).items;
    expect(names(schemas)).toEqual(names([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]));
    expect(names(levels)).toEqual(names([...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]));
    expect(schemas.every((schema) => schema.metadata.annotations?.[AUTO_UPDATE_ANNOTATION] === 'true')).toBe(true);
    expect(levels.find((level) => level.metadata.name === 'workload-low')?.spec).toEqual(
      SUGGESTED_PRIORITY_LEVELS.find((level) => level.metadata.name === 'workload-low')!.spec,
    );
    // Every schema's level exists.
    await waitFor('Dangling False everywhere', async () =>
      (await plane.client.list<FlowSchema>(FLOW_SCHEMAS)).items.every((schema) =>
        schema.status?.conditions?.some((c) => c.type === 'Dangling' && c.status === 'False'),
      ),
    );
  });

  it('names the FlowSchema and priority level of each answer in its headers', async () => {
    const globalDefault = await plane.client.get<FlowSchema>(FLOW_SCHEMAS, 'global-default');
    const level = await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'global-default');
    const answer = await getAs({ username: 'alice', groups: ['system:authenticated'] }, '/api/v1/namespaces/default/configmaps');
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ [FLOW_SCHEMA_UID_HEADER]: globalDefault.metadata.uid, [PRIORITY_LEVEL_UID_HEADER]: level.metadata.uid });
    const missing = await getAs({ username: 'alice', groups: ['system:authenticated'] }, '/api/v1/namespaces/default/configmaps/nope');
    expect(missing.status).toBe(404);
    expect(missing.headers?.[FLOW_SCHEMA_UID_HEADER]).toBe(globalDefault.metadata.uid);
  });

  it('puts back a mandatory object that was changed or deleted', async () => {
    const catchAll = await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'catch-all');
    await plane.client.update(PRIORITY_LEVELS, {
      ...catchAll,
      spec: { ...catchAll.spec, limited: { ...catchAll.spec.limited, nominalConcurrencyShares: 500 } },
    });
    await plane.client.delete(FLOW_SCHEMAS, 'exempt');
    await waitFor(
      'catch-all restored',
      async () => (await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'catch-all')).spec.limited?.nominalConcurrencyShares === 5,
    );
    await waitFor('exempt recreated', () => exists(plane.client, FLOW_SCHEMAS, 'exempt'));
  });

  it('marks a FlowSchema whose priority level is missing as Dangling, and applies new objects live', async () => {
    const schema: FlowSchema = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'for-mallory' },
      spec: {
        priorityLevelConfiguration: { name: 'jail' },
        matchingPrecedence: 300,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'mallory' } }],
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
          },
        ],
      },
    };
    const created = await plane.client.create(FLOW_SCHEMAS, schema);
    const dangling = async (status: string) =>
      (await plane.client.get<FlowSchema>(FLOW_SCHEMAS, 'for-mallory')).status?.conditions?.find((c) => c.type === 'Dangling')?.status === status;
    await waitFor('Dangling True', () => dangling('True'));
    const mallory = { username: 'mallory', groups: ['system:authenticated'] };
    // A dangling schema is skipped: mallory's requests go on to global-default.
    expect((await getAs(mallory, '/api/v1/namespaces/default/configmaps')).headers?.[FLOW_SCHEMA_UID_HEADER]).not.toBe(created.metadata.uid);

    const jail = await plane.client.create<PriorityLevelConfiguration>(PRIORITY_LEVELS, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'jail' },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
    });
    await waitFor('Dangling False', () => dangling('False'));
    await waitFor(
      'mallory in jail',
      async () => (await getAs(mallory, '/api/v1/namespaces/default/configmaps')).headers?.[PRIORITY_LEVEL_UID_HEADER] === jail.metadata.uid,
    );
    const dump = await getAs(mallory, DUMP_PRIORITY_LEVELS_PATH);
    expect(dump.status).toBe(200);
    expect(String(dump.body)).toMatch(/^PriorityLevelName, +ActiveQueues, /);
    expect(String(dump.body)).toMatch(/^jail +, 0 +, true +, false +, 1 +,/m);
  });

  it('keeps what an administrator changed in a suggested object marked autoupdate-spec "false", and recreates deleted ones at start', async () => {
    const workloadLow = await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'workload-low');
    await plane.client.update(PRIORITY_LEVELS, {
      ...workloadLow,
      metadata: { ...workloadLow.metadata, annotations: { [AUTO_UPDATE_ANNOTATION]: 'false' } },
      spec: { ...workloadLow.spec, limited: { ...workloadLow.spec.limited, nominalConcurrencyShares: 7 } },
    });
    const system = await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'system');
    await plane.client.update(PRIORITY_LEVELS, { ...system, spec: { ...system.spec, limited: { ...system.spec.limited, nominalConcurrencyShares: 3 } } });
    await plane.client.delete(FLOW_SCHEMAS, 'service-accounts');
    await plane.stop();
    plane = await start();
    expect((await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'workload-low')).spec.limited?.nominalConcurrencyShares).toBe(7);
    expect((await plane.client.get<PriorityLevelConfiguration>(PRIORITY_LEVELS, 'system')).spec.limited?.nominalConcurrencyShares).toBe(30);
    expect(await exists(plane.client, FLOW_SCHEMAS, 'service-accounts')).toBe(true);
  });
});
