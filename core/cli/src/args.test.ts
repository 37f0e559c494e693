import { describe, expect, it } from 'vitest';
import { parseUpArgs } from './args.js';

describe('skiff up flags', () => {
  it('maps flags to config overrides', () => {
    expect(
      parseUpArgs(['--preset', 'dev', '--data-dir', '/tmp/x', '--port', '0', '--nodes', '3', '--config', 'c.mjs', '--advertise-address', '192.0.2.7']),
    ).toEqual({
      configFile: 'c.mjs',
      overrides: { preset: 'dev', dataDir: '/tmp/x', port: 0, nodes: 3, advertiseAddress: '192.0.2.7', logLevel: undefined },
    });
  });

  it('says which flag is wrong in one line', () => {
    expect(() => parseUpArgs(['--port', 'http'])).toThrow('--port must be a whole number (got "http")');
    expect(() => parseUpArgs(['--nodes', '-1'])).toThrow("Option '--nodes' argument is ambiguous");
    expect(() => parseUpArgs(['--port', '70000'])).toThrow('--port must be at most 65535 (got 70000)');
    expect(() => parseUpArgs(['--colour'])).toThrow("Unknown option '--colour'");
    expect(() => parseUpArgs(['--advertise-address', 'host.example'])).toThrow('--advertise-address must be an IP address (got "host.example")');
    expect(() => parseUpArgs(['now'])).toThrow('unexpected argument "now"');
  });
});
