import { definePlugin } from '@skiff/kernel';

/** Job and CronJob controllers: pods run to completion, parallelism, backoff, schedules. */
const plugin = definePlugin({
  name: '@skiff/plugin-controller-job',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply() {},
});
export default plugin;
