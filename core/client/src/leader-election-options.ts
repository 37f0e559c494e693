import type { ApiClient, Logger, OptionsOf, OptionsSchema } from '@skiff/kernel';
import { LEADER_ELECTION_DEFAULTS, LeaderElector, leaderElectionTimingProblem } from './leader-election.js';

/**
 * The `leaderElection` option of a component that runs once per cluster (the controller manager, the scheduler):
 * kube-controller-manager's and kube-scheduler's --leader-elect flags, durations in seconds.
 */
export function leaderElectionOptionsSchema(resourceName: string) {
  return {
    type: 'object',
    description: 'run only while holding a coordination.k8s.io/v1 Lease, so one of several copies works at a time',
    properties: {
      leaderElect: {
        type: 'boolean',
        default: false,
        description: 'campaign for the lease and work only while leading (off: work at once, as the only copy)',
      },
      leaseDuration: {
        type: 'number',
        minimum: 0,
        default: LEADER_ELECTION_DEFAULTS.leaseDurationMs / 1000,
        description: 'seconds other candidates wait, after the lease last changed, before they take it',
      },
      renewDeadline: {
        type: 'number',
        minimum: 0,
        default: LEADER_ELECTION_DEFAULTS.renewDeadlineMs / 1000,
        description: 'seconds the leader keeps trying to renew before it stops working (less than leaseDuration)',
      },
      retryPeriod: {
        type: 'number',
        minimum: 0,
        default: LEADER_ELECTION_DEFAULTS.retryPeriodMs / 1000,
        description: 'seconds between tries to acquire or renew',
      },
      resourceName: { type: 'string', default: resourceName, description: 'the Lease’s name' },
      resourceNamespace: { type: 'string', default: 'kube-system', description: 'the Lease’s namespace' },
    },
  } as const satisfies OptionsSchema;
}

/** The checked `leaderElection` option (durations in seconds). */
export type LeaderElectionOptions = OptionsOf<ReturnType<typeof leaderElectionOptionsSchema>>;

/** What is wrong with the options' durations, in their own units (seconds), if anything. */
export function leaderElectionOptionsProblem(options: LeaderElectionOptions): string | undefined {
  const problem = leaderElectionTimingProblem(timingOf(options));
  return (
    problem &&
    `leaderElection needs leaseDuration > renewDeadline > 1.2 × retryPeriod > 0 seconds (got ${options.leaseDuration}, ${options.renewDeadline}, ${options.retryPeriod})`
  );
}

function timingOf(options: LeaderElectionOptions) {
  return { leaseDurationMs: options.leaseDuration * 1000, renewDeadlineMs: options.renewDeadline * 1000, retryPeriodMs: options.retryPeriod * 1000 };
}

/** What runs only while leading. `stop` is called once after every `start`, whether the start finished or failed. */
export interface LeaderWork {
  /** `signal` aborts when leadership is lost, possibly while the start is still under way. */
  start(signal: AbortSignal): Promise<void>;
  /** Ends the work and resolves once it has ended. */
  stop(): Promise<void>;
}

/**
 * A started elector that runs `work` while it leads: started on winning the lease, stopped the moment the lease is
 * lost, started afresh on winning it again. Starts and stops never overlap: a stop waits for the start in hand
 * (which sees its signal aborted). A start that fails gives the lease up, so another copy can lead.
 * `options.leaderElect` is not looked at: the caller decides whether to elect at all.
 */
export function runWhileLeading(client: ApiClient, options: LeaderElectionOptions, work: LeaderWork, logger: Logger): LeaderElector {
  let order: Promise<void> = Promise.resolve();
  let active = false;
  const stopWork = async () => {
    if (!active) return;
    active = false;
    await work.stop();
  };
  const elector: LeaderElector = new LeaderElector({
    client,
    lease: { name: options.resourceName, namespace: options.resourceNamespace },
    ...timingOf(options),
    logger,
    callbacks: {
      startedLeading(signal) {
        order = order.then(async () => {
          if (signal.aborted) return;
          active = true;
          try {
            await work.start(signal);
          } catch (err) {
            if (signal.aborted) return;
            logger.error({ err }, 'the work failed to start while leading; giving the lease up');
            await stopWork();
            void elector.stop();
          }
        });
      },
      stoppedLeading() {
        order = order.then(stopWork);
        return order;
      },
    },
  });
  elector.start();
  return elector;
}
