import { parseArgs } from 'node:util';
import type { SkiffConfig } from '@skiff/kernel';

export const USAGE = `usage: skiff up [--preset NAME] [--config FILE] [--data-dir DIR] [--port N] [--nodes N] [--log-level LEVEL]

Starts a whole cluster in this process and writes <data-dir>/admin.kubeconfig.
  --preset     preset name or package (default: dev, or the config file's)
  --config     config file (default: skiff.config.* / .skiffrc* / package.json#skiff in this folder)
  --data-dir   where state lives (default: ./.skiff)
  --port       API server port (default: 6443; 0 picks a free one)
  --nodes      number of simulated nodes (default: 1)
  --log-level  trace|debug|info|warn|error|silent (default: info; logs go to stderr)`;

export interface UpArgs {
  configFile?: string;
  overrides: SkiffConfig;
}

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${flag} must be a whole number (got "${value}")`);
  return Number(value);
}

/** Parses `skiff up` flags; throws an Error whose message is the one line to show the user. */
export function parseUpArgs(argv: string[]): UpArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      preset: { type: 'string' },
      config: { type: 'string', short: 'c' },
      'data-dir': { type: 'string' },
      port: { type: 'string', short: 'p' },
      nodes: { type: 'string' },
      'log-level': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  const port = wholeNumber('--port', values.port);
  if (port !== undefined && port > 65535) throw new Error(`--port must be at most 65535 (got ${port})`);
  return {
    configFile: values.config,
    overrides: {
      preset: values.preset,
      dataDir: values['data-dir'],
      port,
      nodes: wholeNumber('--nodes', values.nodes),
      logLevel: values['log-level'],
    },
  };
}
