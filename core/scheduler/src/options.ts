import { leaderElectionOptionsSchema } from '@skiff/client';
import type { OptionsOf, OptionsSchema } from '@skiff/kernel';
import { DEFAULT_SCHEDULER_NAME } from './names.js';

const pluginSet = {
  type: 'object',
  properties: {
    enabled: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, weight: { type: 'integer', minimum: 0 } }, required: ['name'] },
    },
    disabled: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  },
} as const satisfies OptionsSchema;

/** The scheduler's options: KubeSchedulerConfiguration's profiles and percentageOfNodesToScore. */
export const schedulerOptionsSchema = {
  type: 'object',
  properties: {
    schedulerName: {
      type: 'string',
      default: DEFAULT_SCHEDULER_NAME,
      description: 'the one profile’s schedulerName when `profiles` is not given',
    },
    percentageOfNodesToScore: {
      type: 'integer',
      minimum: 0,
      maximum: 100,
      description: 'stop filtering after this share of nodes fit (0 or unset: adaptive, 50 % down to 5 %)',
    },
    profiles: {
      type: 'array',
      description: 'KubeSchedulerConfiguration profiles: schedulerName, plugins per extension point, pluginConfig, percentageOfNodesToScore',
      items: {
        type: 'object',
        properties: {
          schedulerName: { type: 'string' },
          percentageOfNodesToScore: { type: 'integer', minimum: 0, maximum: 100 },
          plugins: {
            type: 'object',
            properties: {
              multiPoint: pluginSet,
              queueSort: pluginSet,
              preEnqueue: pluginSet,
              preFilter: pluginSet,
              filter: pluginSet,
              postFilter: pluginSet,
              preScore: pluginSet,
              score: pluginSet,
              reserve: pluginSet,
              permit: pluginSet,
              preBind: pluginSet,
              bind: pluginSet,
              postBind: pluginSet,
            },
          },
          pluginConfig: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, args: { type: 'object', additionalProperties: true } },
              required: ['name'],
            },
          },
        },
        required: ['schedulerName'],
      },
    },
    thread: {
      type: 'string',
      enum: ['auto', 'worker', 'main'],
      default: 'auto',
      description:
        'where scheduling cycles run: a worker thread of their own, or the API server’s event loop (auto: a worker when the plugins can be loaded there)',
    },
    leaderElection: leaderElectionOptionsSchema('kube-scheduler'),
    kubeconfig: {
      type: 'string',
      default: '',
      description:
        "talk to the API server this kubeconfig names (relative to the config's folder), with its credentials, instead of this process's; '' for this process's",
    },
    servers: {
      type: 'array',
      items: { type: 'string', pattern: '^https?://' },
      default: [],
      description: "with `kubeconfig`: API servers of the cluster to fail over between (https://host:port), instead of the kubeconfig's server",
    },
  },
} as const satisfies OptionsSchema;

export type SchedulerPluginOptions = OptionsOf<typeof schedulerOptionsSchema>;
