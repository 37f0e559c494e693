import { describe, expect, it } from 'vitest';
import { FLOWCONTROL_KINDS } from './flowcontrol.js';
import { kindHarness } from '../test-support/kind-harness.js';

const { create, fields, cells } = kindHarness(FLOWCONTROL_KINDS);

describe('flow schemas', () => {
  const body = {
    metadata: { name: 'service-accounts' },
    spec: {
      priorityLevelConfiguration: { name: 'workload-low' },
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'Group', group: { name: 'system:serviceaccounts' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
        },
      ],
    },
  };

  it('defaults the matching precedence and prints the row', () => {
    const fs = create('flowschemas', body);
    expect((fs.spec as { matchingPrecedence: number }).matchingPrecedence).toBe(1000);
    expect(cells('flowschemas', fs)).toEqual(['service-accounts', 'workload-low', 1000, 'ByUser', '3h5m', '?']);
    fs.status = { conditions: [{ type: 'Dangling', status: 'False' }] };
    expect(cells('flowschemas', fs).at(-1)).toBe('False');
  });

  it('checks the priority level reference, precedence and rules', () => {
    expect(
      fields('flowschemas', {
        metadata: { name: 'bad' },
        spec: {
          matchingPrecedence: 20000,
          rules: [
            {
              subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: 'x' } }],
              resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
            },
          ],
        },
      }),
    ).toEqual([
      'spec.priorityLevelConfiguration.name: Required value: must reference a priority level',
      'spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000',
      'spec.rules[0].subjects[0].serviceAccount.namespace: Required value',
      'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
    ]);
  });
});

describe('priority level configurations', () => {
  it('defaults a queuing level and prints its queues', () => {
    const level = create('prioritylevelconfigurations', {
      metadata: { name: 'workload-low' },
      spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } },
    });
    expect(level.spec).toEqual({
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 30,
        lendablePercent: 0,
        limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } },
      },
    });
    expect(cells('prioritylevelconfigurations', level)).toEqual(['workload-low', 'Limited', 30, 64, 8, 50, '3h5m']);
    const exempt = create('prioritylevelconfigurations', { metadata: { name: 'exempt' }, spec: { type: 'Exempt', exempt: {} } });
    expect(cells('prioritylevelconfigurations', exempt)).toEqual(['exempt', 'Exempt', '<none>', '<none>', '<none>', '<none>', '3h5m']);
  });

  it('checks the type against its configuration and the shuffle-sharding sizes', () => {
    expect(fields('prioritylevelconfigurations', { metadata: { name: 'x' }, spec: { type: 'Limited' } })).toEqual([
      'spec.limited: Required value: must not be empty when type is Limited',
    ]);
    expect(
      fields('prioritylevelconfigurations', {
        metadata: { name: 'x' },
        spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 5 } } } },
      }),
    ).toEqual(['spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)']);
  });
});
