import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import type { SkiffConfig } from '@skiff/kernel';
import { LOG_FORMATS, type LogFormat } from './logs.js';

export interface UpArgs {
  configFile?: string;
  overrides: SkiffConfig;
  /** `--log-format`: component logs to stderr in this format. */
  logFormat?: LogFormat;
}

function logFormat(value: string | undefined): LogFormat | undefined {
  if (value === undefined) return undefined;
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new Error(`--log-format must be one of ${LOG_FORMATS.join(', ')} (got "${value}")`);
  return value as LogFormat;
}

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${flag} must be a whole number (got "${value}")`);
  return Number(value);
}

function ipAddress(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isIP(value)) throw new Error(`${flag} must be an IP address (got "${value}")`);
  return value;
}

/** Parses `skiff up` flags; throws an Error whose message is the one line to show the user. */
export function parseUpArgs(argv: string[]): UpArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      preset: { type: 'string' },
      config: { type: 'string', short: 'c' },
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string', short: 'p' },
      nodes: { type: 'string' },
      'advertise-address': { type: 'string' },
      'log-level': { type: 'string' },
      'log-format': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  const port = wholeNumber('--port', values.port);
  if (port !== undefined && port > 65535) throw new Error(`--port must be at most 65535 (got ${port})`);
  return {
    configFile: values.config,
    logFormat: logFormat(values['log-format']),
    overrides: {
      preset: values.preset,
      dataDir: values['data-dir'],
      host: values.host === undefined ? undefined : (ipAddress('--host', values.host) ?? values.host),
      port,
      nodes: wholeNumber('--nodes', values.nodes),
      advertiseAddress: ipAddress('--advertise-address', values['advertise-address']),
      logLevel: values['log-level'],
    },
  };
}

/** True when `-h` or `--help` comes before any `--` terminator: the command prints its usage and exits 0. */
export function helpRequested(argv: string[]): boolean {
  const terminator = argv.indexOf('--');
  return (terminator < 0 ? argv : argv.slice(0, terminator)).some((arg) => arg === '--help' || arg === '-h');
}
