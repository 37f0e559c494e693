import { controllerPlugin } from '@skiff/controller-manager';
import { JobError } from './errors.js';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { CronJobController } from './cronjob-controller.js';
import { JobController } from './job-controller.js';
import {
  CRONJOB_CONTROLLER_NAME,
  DEFAULT_POD_FAILURE_BACKOFF_MS,
  JOB_CONTROLLER_NAME,
  MAX_POD_FAILURE_BACKOFF_MS,
  PLUGIN_NAME,
  TTL_CONTROLLER_NAME,
} from './names.js';
import { TtlAfterFinishedController } from './ttl-controller.js';

/** The Job, CronJob and ttl-after-finished controllers. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  workers: 'Jobs, CronJobs and expiring Jobs synced in parallel, each',
  options: {
    podFailureBackoffMs: {
      type: 'integer',
      minimum: 0,
      default: DEFAULT_POD_FAILURE_BACKOFF_MS,
      description: 'delay before a failed Job pod is replaced, doubled for each further failure since the last success',
    },
    maxPodFailureBackoffMs: { type: 'integer', minimum: 0, default: MAX_POD_FAILURE_BACKOFF_MS, description: 'the longest such delay' },
    defaultTimeZone: {
      type: 'string',
      description: "time zone of CronJob schedules without timeZone or CRON_TZ (default: the process's local time zone)",
    },
  },
  controllers(options) {
    if (options.defaultTimeZone !== undefined) checkTimeZone(options.defaultTimeZone);
    return {
      [JOB_CONTROLLER_NAME]: (ctx) => new JobController(ctx, { backoffBaseMs: options.podFailureBackoffMs, backoffMaxMs: options.maxPodFailureBackoffMs }),
      [CRONJOB_CONTROLLER_NAME]: (ctx) => new CronJobController(ctx, options.defaultTimeZone ? { defaultTimeZone: options.defaultTimeZone } : {}),
      [TTL_CONTROLLER_NAME]: (ctx) => new TtlAfterFinishedController(ctx),
    };
  },
});
export default plugin;

export type JobControllerPluginOptions = PluginOptions<typeof plugin>;

export { CRONJOB_CONTROLLER_NAME, JOB_CONTROLLER_NAME, PLUGIN_NAME, TTL_CONTROLLER_NAME } from './names.js';

/** A zone the runtime's time zone database does not know stops the start, naming the option. */
function checkTimeZone(timeZone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new JobError('SKIFF_ERR_JOB_OPTION', {
      option: 'defaultTimeZone',
      detail: `unknown time zone ${JSON.stringify(timeZone)} (want an IANA name such as "Europe/Berlin" or "UTC")`,
    });
  }
}
