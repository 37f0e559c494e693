import type { Logger } from '@skiff/kernel';
import { pluginInput } from './conflist.js';
import { CniError } from './errors.js';
import { cniEnv, parseResult, pluginFailure, runPlugin, type Invocation } from './invoke.js';
import type { CniConfList, CniResult, RuntimeConfig } from './types.js';

export interface ChainTarget extends Omit<Invocation, 'command'> {
  runtimeConfig: RuntimeConfig;
}

/** Runs a network configuration list the way the CNI spec orders it: ADD forwards, DEL backwards, CHECK forwards. */
export class CniRunner {
  constructor(
    private readonly binDir: string,
    private readonly baseEnv: NodeJS.ProcessEnv,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {}

  /** Each plugin gets the result of the one before as prevResult; the last one's result is the list's. */
  async add(list: CniConfList, target: ChainTarget): Promise<CniResult> {
    let prevResult: CniResult | undefined;
    for (const plugin of list.plugins)
      prevResult = await this.exec('ADD', list, plugin.type, target, pluginInput(list, plugin, { ...{}, ...target, prevResult }));
    return prevResult!;
  }

  /** Every plugin sees the cached ADD result; every one runs even when one fails, and the first failure is thrown. */
  async del(list: CniConfList, target: ChainTarget, prevResult: CniResult | undefined): Promise<void> {
    let first: unknown;
    for (const plugin of [...list.plugins].reverse()) {
      try {
        await this.exec('DEL', list, plugin.type, target, pluginInput(list, plugin, { ...{}, ...target, prevResult }));
      } catch (err) {
        this.logger.warn({ err, plugin: plugin.type, container: target.containerId }, 'CNI DEL failed');
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }

  async check(list: CniConfList, target: ChainTarget, prevResult: CniResult): Promise<void> {
    for (const plugin of list.plugins) await this.exec('CHECK', list, plugin.type, target, pluginInput(list, plugin, { ...{}, ...target, prevResult }));
  }

  private async exec(
    command: Invocation['command'],
    list: CniConfList,
    plugin: string,
    target: ChainTarget,
    input: Record<string, unknown>,
  ): Promise<CniResult | undefined> {
    const started = performance.now();
    const env = cniEnv({ ...{}, ...target, command }, this.binDir, this.baseEnv);
    const exit = await runPlugin(this.binDir, plugin, env, JSON.stringify(input), this.timeoutMs).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new CniError('SKIFF_ERR_CNI_PLUGIN_MISSING', { plugin, binDir: this.binDir });
      throw err;
    });
    this.logger.debug({ plugin, command, container: target.containerId, ms: Math.round(performance.now() - started) }, 'CNI plugin ran');
    if (exit.code !== 0) throw pluginFailure(plugin, command, list.name, exit);
    // ADD prints the result; DEL and CHECK print nothing on success.
    return command === 'ADD' ? parseResult(plugin, command, list.name, exit.stdout) : undefined;
  }
}
