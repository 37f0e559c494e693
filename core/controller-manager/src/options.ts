import { leaderElectionOptionsSchema } from '@skiff/client';
import type { OptionsOf, OptionsSchema } from '@skiff/kernel';

export const CONTROLLER_MANAGER_DEFAULTS = Object.freeze({ resyncMs: 30_000, workers: 2, enabled: ['*'] });

export const controllerManagerOptionsSchema = {
  type: 'object',
  properties: {
    resyncMs: {
      type: 'integer',
      minimum: 0,
      default: CONTROLLER_MANAGER_DEFAULTS.resyncMs,
      description: 'Informer resync period in milliseconds: how often informers replay their cache to handlers, so missed work is retried (0 turns resync off)',
    },
    workers: {
      type: 'integer',
      minimum: 1,
      default: CONTROLLER_MANAGER_DEFAULTS.workers,
      description: "Workers per controller, unless a controller's own options say otherwise",
    },
    enabled: {
      type: 'array',
      items: { type: 'string', pattern: '^(\\*|-?[a-z0-9][a-z0-9-]*)$' },
      default: [...CONTROLLER_MANAGER_DEFAULTS.enabled],
      description: 'Controllers to run: "*" for all, "name" to add one, "-name" to leave one out',
    },
    leaderElection: leaderElectionOptionsSchema('kube-controller-manager'),
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

export type ControllerManagerOptions = OptionsOf<typeof controllerManagerOptionsSchema>;
