import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESOURCES } from '@skiff/api';
import { definePlugin, recordingLogger, type LogRecord } from '@skiff/kernel';
import { startControlPlane } from './control-plane.js';

/** Logs the options it was given and the node count from the config when the kernel applies it. */
const greeter = definePlugin({
  name: 'test-greeter',
  version: '0.1.0',
  kernel: '^0.1.0',
  options: { type: 'object', properties: { greeting: { type: 'string', default: 'hello' } } } as const,
  apply(kernel, options) {
    kernel.logger.info({ greeting: options.greeting, nodes: kernel.config.nodes }, 'greeter applied');
  },
});

describe('startControlPlane', () => {
  it('loads plugins alone or with options, with the config and logger given, and removes its temporary folder on stop', async () => {
    const lines: LogRecord[] = [];
    const plane = await startControlPlane([[greeter, { greeting: 'ahoy' }]], { config: { nodes: 3 }, logger: recordingLogger(lines) });
    try {
      expect(lines.find((line) => line.message === 'greeter applied')?.fields).toEqual({ greeting: 'ahoy', nodes: 3 });
      expect(plane.kernel.config).toMatchObject({ nodes: 3, port: 0, dataDir: plane.dataDir });
      await plane.client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'reachable' } });
    } finally {
      await plane.stop();
    }
    expect(existsSync(plane.dataDir)).toBe(false);
  });

  it('keeps a data folder it was given, so a second control plane starts from the same state', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'skiff-testing-'));
    try {
      const first = await startControlPlane([greeter], { dataDir, config: { logLevel: 'silent' } });
      await first.client.create(RESOURCES.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kept' } });
      await first.stop();
      const second = await startControlPlane([], { dataDir, config: { logLevel: 'silent' } });
      try {
        expect((await second.client.get(RESOURCES.namespaces, 'kept')).metadata.name).toBe('kept');
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
