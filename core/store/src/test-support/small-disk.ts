import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  dir: string;
  unmount(): void;
}

/** A tmpfs of `sizeMiB` MiB, to fill up for real. Mounting needs root (CAP_SYS_ADMIN): without it the test fails, saying so. */
export function mountSmallDisk(sizeMiB: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`the disk-full tests mount a ${sizeMiB} MiB tmpfs and must run as root (CAP_SYS_ADMIN): mount failed: ${stderr || String(err)}`);
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
