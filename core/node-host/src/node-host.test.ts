import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findTool, mountPoints, mountsUnder, toolPath } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-node-host-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('host helpers', () => {
  it('reads the mount table and finds mounts under a folder', async () => {
    const points = await mountPoints();
    expect(points).toContain('/');
    expect(await mountsUnder(dir)).toEqual([]);
    expect((await mountsUnder('/proc')).at(-1)).toBe('/proc');
  });

  it('finds tools on PATH and in the sbin folders, and only executable ones', async () => {
    expect(toolPath('/opt/bin').split(':')).toEqual(['/opt/bin', '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);
    expect(await findTool('sh', '/nowhere:/bin:/usr/bin')).toMatch(/\/sh$/);
    writeFileSync(join(dir, 'not-executable'), '#!/bin/sh\n', { mode: 0o644 });
    expect(await findTool('not-executable', dir)).toBeUndefined();
    expect(await findTool(join(dir, 'not-executable'))).toBeUndefined();
    expect(await findTool('/bin/sh')).toBe('/bin/sh');
  });
});
