import { errorMessage } from '@skiff/api';
import type { ActionRunner, ActionTarget, Handler } from '../probes/actions.js';
import { podDescription } from './events.js';

/**
 * Runs a container's postStart and preStop handlers (exec through the runtime, httpGet, sleep) within a time
 * limit, and words a failure as Kubernetes does:
 * `Exec lifecycle hook ([sh -c exit 1]) for Container "app" in Pod "web_default(<uid>)" failed - error: …`.
 */
export class LifecycleHooks {
  constructor(private readonly runner: ActionRunner) {}

  /** Runs the handler; answers the failure message, or undefined when it succeeded. */
  async run(handler: Handler, target: ActionTarget, timeoutSeconds: number): Promise<string | undefined> {
    const where = `for Container "${target.container.name}" in Pod "${podDescription(target.pod.metadata)}"`;
    if (handler.exec) {
      const command = handler.exec.command ?? [];
      const prefix = `Exec lifecycle hook ([${command.join(' ')}]) ${where} failed - error:`;
      try {
        const result = await this.runner.run(handler, target, timeoutSeconds);
        if (result.outcome === 'success') return undefined;
        const cause = result.exitCode === undefined ? result.output : `command '${command.join(' ')}' exited with ${result.exitCode}: `;
        return `${prefix} ${cause}, message: ${JSON.stringify(result.exitCode === undefined ? '' : result.output)}`;
      } catch (err) {
        return `${prefix} ${errorMessage(err)}, message: ""`;
      }
    }
    if (handler.httpGet) {
      const prefix = `HTTP lifecycle hook (${handler.httpGet.path ?? '/'}) ${where} failed - error:`;
      try {
        const result = await this.runner.run(handler, target, timeoutSeconds);
        return result.outcome === 'success' ? undefined : `${prefix} ${result.output}`;
      } catch (err) {
        return `${prefix} ${errorMessage(err)}`;
      }
    }
    if (handler.sleep) {
      await this.runner.run({ sleep: { seconds: Math.min(handler.sleep.seconds, timeoutSeconds) } }, target, timeoutSeconds);
      return undefined;
    }
    return `Lifecycle hook ${where} failed - error: only exec, httpGet and sleep handlers run as lifecycle hooks`;
  }
}
