import type { Kernel } from '@skiff/kernel';
import { parseArgs } from 'node:util';
import { helpRequested } from './args.js';
import { apiserver, separateComponent } from './components.js';
import { image } from './image.js';
import { joinCluster } from './join.js';
import { kubeconfig } from './kubeconfig.js';
import { newPlugin } from './new/command.js';
import { plugins } from './plugins.js';
import { status } from './status.js';
import { storeCommand } from './store.js';
import { up, type Output } from './up.js';
import { token } from './token.js';
import { trace } from './trace/command.js';
import { COMMANDS, isCommand, USAGE } from './usage.js';
import { CLI_VERSION } from './version.js';

/** What a command left behind: an exit code, or (for `up`, `join` and the components) a running kernel the caller stops on a signal. */
export type CommandResult = { exitCode: number } | { kernel: Kernel };

/**
 * Runs `skiff <command> …`. `--help`/`-h` prints a command's usage and succeeds, for every command.
 * Wrong flags to `up` reject with the one line to show; an unknown command is exit code 2.
 */
export async function main(argv: string[], output: Output, cwd = process.cwd()): Promise<CommandResult> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h') {
    output.out(USAGE);
    return { exitCode: 0 };
  }
  if (command === '--version') return main(['version', ...rest], output, cwd);
  if (!isCommand(command)) {
    output.err(`skiff: unknown command "${command}"\n${USAGE}`);
    return { exitCode: 2 };
  }
  if (helpRequested(rest)) {
    output.out(COMMANDS[command].usage);
    return { exitCode: 0 };
  }
  switch (command) {
    case 'up':
      return { kernel: await up(rest, output, cwd) };
    case 'join':
      return { kernel: await joinCluster(rest, output, cwd) };
    case 'apiserver':
      return { kernel: await apiserver(rest, output, cwd) };
    case 'controller-manager':
    case 'scheduler':
      return { kernel: await separateComponent(command, rest, output, cwd) };
    case 'token':
      await token(rest, output, cwd);
      return { exitCode: 0 };
    case 'trace':
      return { exitCode: await trace(rest, output, cwd) };
    case 'new':
      newPlugin(rest, output, cwd);
      return { exitCode: 0 };
    case 'image':
      await image(rest, output, cwd);
      return { exitCode: 0 };
    case 'kubeconfig':
      await kubeconfig(rest, output, cwd);
      return { exitCode: 0 };
    case 'store':
      await storeCommand(rest, output, cwd);
      return { exitCode: 0 };
    case 'status':
      return { exitCode: await status(rest, output, cwd) };
    case 'plugins':
      await plugins(rest, output, cwd);
      return { exitCode: 0 };
    case 'version':
      parseArgs({ args: rest, options: {}, strict: true, allowPositionals: false });
      output.out(`skiff ${CLI_VERSION}`);
      return { exitCode: 0 };
    case 'help': {
      const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
      const [topic, extra] = positionals;
      if (extra !== undefined) throw new Error(`unexpected argument "${extra}"`);
      if (topic === undefined) output.out(USAGE);
      else if (isCommand(topic)) output.out(COMMANDS[topic].usage);
      else {
        output.err(`skiff: unknown command "${topic}"\n${USAGE}`);
        return { exitCode: 2 };
      }
      return { exitCode: 0 };
    }
  }
}
