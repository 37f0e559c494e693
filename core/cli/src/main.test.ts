import { describe, expect, it } from 'vitest';
import { helpRequested } from './args.js';
import { main } from './main.js';
import { COMMANDS, USAGE } from './usage.js';
import { CLI_VERSION } from './version.js';

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const result = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { result, out: out.join('\n'), err: err.join('\n') };
}

describe('skiff <command> --help', () => {
  it('prints the usage and succeeds for every command, with --help and -h', async () => {
    for (const command of Object.keys(COMMANDS)) {
      for (const flag of ['--help', '-h']) {
        const { result, out, err } = await run(command, flag);
        expect(result, `${command} ${flag}`).toEqual({ exitCode: 0 });
        expect(out, `${command} ${flag}`).toBe(COMMANDS[command as keyof typeof COMMANDS].usage);
        expect(err).toBe('');
      }
    }
  });

  it('prints `skiff up` usage even after other flags, without starting anything', async () => {
    const { result, out } = await run('up', '--port', '0', '--nodes', '3', '-h');
    expect(result).toEqual({ exitCode: 0 });
    expect(out).toMatch(/^usage: skiff up \[--preset NAME\]/);
    expect(out).toContain('--data-dir');
  });

  it('lists the commands with no command, --help, -h and help', async () => {
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      const { result, out } = await run(...argv);
      expect(result).toEqual({ exitCode: 0 });
      expect(out).toBe(USAGE);
    }
    expect(USAGE).toMatch(/^ {2}up {17}start a whole cluster in this process$/m);
  });

  it("prints a command's usage with help COMMAND", async () => {
    expect(await run('help', 'up')).toMatchObject({ result: { exitCode: 0 }, out: COMMANDS.up.usage });
  });

  it('prints the version', async () => {
    expect(await run('version')).toMatchObject({ result: { exitCode: 0 }, out: `skiff ${CLI_VERSION}` });
    expect(await run('--version')).toMatchObject({ result: { exitCode: 0 }, out: `skiff ${CLI_VERSION}` });
  });

  it('answers an unknown command with exit code 2 and the command list', async () => {
    const { result, err } = await run('down');
    expect(result).toEqual({ exitCode: 2 });
    expect(err).toBe(`skiff: unknown command "down"\n${USAGE}`);
    expect((await run('help', 'down')).result).toEqual({ exitCode: 2 });
  });

  it('rejects flags a command does not take in one line', async () => {
    await expect(run('version', '--short')).rejects.toThrow("Unknown option '--short'");
    await expect(run('up', '--colour')).rejects.toThrow("Unknown option '--colour'");
  });
});

describe('helpRequested', () => {
  it('finds -h and --help before a -- terminator only', () => {
    expect(helpRequested(['--port', '0', '--help'])).toBe(true);
    expect(helpRequested(['-h'])).toBe(true);
    expect(helpRequested(['--', '--help'])).toBe(false);
    expect(helpRequested(['--helpful'])).toBe(false);
  });
});
