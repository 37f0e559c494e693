import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './harness.js';
import {
  buildTestImages,
  INDEX_HTML,
  missingPrerequisites,
  ociArchitecture,
  pushTestImages,
  startRegistry,
  type TestImage,
  type TestImages,
  type TestRegistry,
} from '../scripts/test-images.mjs';

// The images the real-container preset runs (scripts/test-images.mjs): built from Debian's busybox-static into
// a temp dir, checked as OCI layouts and archives, pushed to Debian's docker-registry on a free loopback port and
// read back over the registry API. Real containers need root and Debian packages, so without them this file
// skips and says why (`bash scripts/install-system-deps.sh` as root installs them).

const skipReason =
  process.getuid?.() !== 0
    ? 'the real-container preset needs root'
    : missingPrerequisites({ registry: true })
        .map((what) => `missing ${what}`)
        .join('; ');
if (skipReason) console.log(`test-images.test.ts skipped: ${skipReason}`);

const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}
interface Manifest {
  schemaVersion: number;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
}
interface ImageConfig {
  architecture: string;
  os: string;
  config: { Env?: string[]; Cmd?: string[]; Entrypoint?: string[] };
  rootfs: { type: string; diff_ids: string[] };
}

const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const blobPath = (layout: string, digest: string) => join(layout, 'blobs', ...digest.split(':'));
/** A blob of the layout, after checking its size and that its sha256 is its name. */
const blob = (layout: string, descriptor: Descriptor): Buffer => {
  const bytes = readFileSync(blobPath(layout, descriptor.digest));
  expect(bytes.length, `size of ${descriptor.digest}`).toBe(descriptor.size);
  expect(sha256(bytes), `sha256 of ${descriptor.digest}`).toBe(descriptor.digest);
  return bytes;
};
const tarList = (file: string) => execFileSync('tar', ['--list', '--verbose', '--numeric-owner', `--file=${file}`], { encoding: 'utf8' });
const tarRead = (file: string, member: string) => execFileSync('tar', ['--extract', '--to-stdout', `--file=${file}`, member], { encoding: 'utf8' });

/** Walks index.json → manifest → config and layers, checking each digest; returns what it found. */
function readLayout(image: TestImage) {
  expect(JSON.parse(readFileSync(join(image.layout, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
  const index = JSON.parse(readFileSync(join(image.layout, 'index.json'), 'utf8')) as { schemaVersion: number; manifests: Descriptor[] };
  expect(index.schemaVersion).toBe(2);
  expect(index.manifests).toHaveLength(1);
  const [entry] = index.manifests;
  expect(entry.mediaType).toBe(MANIFEST_MEDIA_TYPE);
  expect(entry.digest).toBe(image.manifestDigest);
  const manifest = JSON.parse(blob(image.layout, entry).toString('utf8')) as Manifest;
  expect(manifest.schemaVersion).toBe(2);
  expect(manifest.mediaType).toBe(MANIFEST_MEDIA_TYPE);
  const config = JSON.parse(blob(image.layout, manifest.config).toString('utf8')) as ImageConfig;
  for (const layer of manifest.layers) blob(image.layout, layer);
  // Uncompressed layers: each diff ID is the layer's own digest.
  expect(config.rootfs).toEqual({ type: 'layers', diff_ids: manifest.layers.map((layer) => layer.digest) });
  const blobs = readdirSync(join(image.layout, 'blobs/sha256')).map((name) => `sha256:${name}`);
  expect(blobs.sort()).toEqual([entry.digest, manifest.config.digest, ...manifest.layers.map((layer) => layer.digest)].sort());
  return { entry, manifest, config };
}

describe.skipIf(skipReason)('test images and a local registry', () => {
  let out: string;
  let build: TestImages;
  let registry: TestRegistry | undefined;

  beforeAll(async () => {
    out = tempDir('test-images');
    build = await buildTestImages({ out });
    console.log(`test images built in ${build.seconds.toFixed(2)}s`);
  });
  afterAll(async () => {
    await registry?.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('writes the busybox image as a valid OCI layout: Cmd sh, no entrypoint, PATH, this host’s architecture', () => {
    const { entry, config } = readLayout(build.images.busybox);
    expect(entry.annotations).toEqual({ 'io.containerd.image.name': 'skiff.local/busybox:1', 'org.opencontainers.image.ref.name': '1' });
    expect(entry.platform).toEqual({ architecture: ociArchitecture(), os: 'linux' });
    expect(config.architecture).toBe(ociArchitecture());
    expect(config.os).toBe('linux');
    expect(config.config.Cmd).toEqual(['sh']);
    expect(config.config.Entrypoint).toBeUndefined();
    expect(config.config.Env).toEqual(['PATH=/usr/sbin:/usr/bin:/sbin:/bin']);
  });

  it('its one layer holds busybox with its applets, /www/index.html, root and nobody, and a sticky /tmp', () => {
    const [layer] = build.images.busybox.layerDigests;
    const file = blobPath(build.images.busybox.layout, layer);
    const listing = tarList(file);
    expect(listing).toMatch(/^-rwxr-xr-x 0\/0 .* bin\/busybox$/m);
    for (const applet of ['sh', 'cat', 'httpd', 'wget', 'sleep', 'nc', 'ps', 'tar'])
      expect(listing).toMatch(new RegExp(`^l\\S+ 0/0 .* bin/${applet} -> busybox$`, 'm'));
    expect(listing).toMatch(/^drwxrwxrwt 0\/0 .* tmp\/$/m);
    expect(listing).not.toMatch(/^\S+ (?!0\/0 )/m);
    expect(tarRead(file, 'www/index.html')).toBe(INDEX_HTML);
    expect(tarRead(file, 'etc/passwd')).toMatch(/^root:x:0:0:.*\nnobody:x:65534:65534:/);
    expect(tarRead(file, 'etc/group')).toMatch(/^root:x:0:\nnobody:x:65534:/);
  });

  it('writes the pause image as the busybox layer plus /pause, with Entrypoint /pause', () => {
    const { entry, manifest, config } = readLayout(build.images.pause);
    expect(entry.annotations?.['io.containerd.image.name']).toBe('skiff.local/pause:3.10');
    expect(entry.annotations?.['org.opencontainers.image.ref.name']).toBe('3.10');
    expect(manifest.layers.map((layer) => layer.digest)).toEqual([...build.images.busybox.layerDigests, build.images.pause.layerDigests[1]]);
    expect(config.config.Entrypoint).toEqual(['/pause']);
    const pauseLayer = blobPath(build.images.pause.layout, manifest.layers[1].digest);
    expect(tarList(pauseLayer)).toMatch(/^-rwxr-xr-x 0\/0 .* pause$/m);
    expect(tarRead(pauseLayer, 'pause')).toContain("trap 'exit 0' TERM INT");
  });

  it('writes the curl image as the busybox layer plus curl, getent, every library they load and nsswitch.conf; both run in that tree', async () => {
    const { entry, manifest, config } = readLayout(build.images.curl);
    expect(entry.annotations?.['io.containerd.image.name']).toBe('skiff.local/curl:1');
    expect(manifest.layers.map((layer) => layer.digest)).toEqual([...build.images.busybox.layerDigests, build.images.curl.layerDigests[1]]);
    expect(config.config.Cmd).toEqual(['sh']);
    const curlLayer = blobPath(build.images.curl.layout, manifest.layers[1].digest);
    expect(tarList(curlLayer)).toMatch(/^-rwxr-xr-x 0\/0 .* usr\/bin\/curl$/m);
    expect(tarList(curlLayer)).toMatch(/^-rwxr-xr-x 0\/0 .* usr\/bin\/getent$/m);
    expect(tarRead(curlLayer, 'etc/nsswitch.conf')).toContain('hosts: files dns');
    if (process.getuid?.() !== 0) return console.log('curl in the image tree not run: chroot needs root');
    const root = join(out, 'curl-root');
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root);
    for (const layer of manifest.layers) execFileSync('tar', ['-xf', blobPath(build.images.curl.layout, layer.digest), '-C', root]);
    expect(execFileSync('chroot', [root, '/usr/bin/curl', '--version'], { encoding: 'utf8' })).toMatch(/^curl \d+\.\d+/);
    expect(execFileSync('chroot', [root, '/usr/bin/getent', 'passwd', 'nobody'], { encoding: 'utf8' })).toMatch(/^nobody:x:65534:/);
    rmSync(root, { recursive: true, force: true });
  });

  it('writes each OCI archive as a tar of its layout, so `ctr images import` finds the same index', () => {
    for (const image of Object.values(build.images)) {
      expect(tarRead(image.archive, 'index.json')).toBe(readFileSync(join(image.layout, 'index.json'), 'utf8'));
      expect(tarRead(image.archive, 'oci-layout')).toBe(readFileSync(join(image.layout, 'oci-layout'), 'utf8'));
      for (const digest of [image.manifestDigest, image.configDigest, ...image.layerDigests]) {
        expect(tarList(image.archive)).toContain(`blobs/sha256/${digest.slice('sha256:'.length)}`);
      }
    }
  });

  it('reuses the images on a second build, with the same digests', async () => {
    const again = await buildTestImages({ out });
    expect(again.reused).toBe(true);
    expect(again.images).toEqual(build.images);
    expect(again.seconds).toBeLessThan(1);
  });

  it('pushes all three to a registry on a free loopback port, which serves them under skiff/busybox:1, skiff/pause:3.10 and skiff/curl:1', async () => {
    registry = await startRegistry({ out });
    expect(registry.started).toBe(true);
    expect(registry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const started = performance.now();
    const pushed = await pushTestImages(build, registry.address);
    console.log(`test images pushed in ${((performance.now() - started) / 1000).toFixed(2)}s`);
    expect(pushed.map((image) => image.reference)).toEqual([
      `${registry.address}/skiff/busybox:1`,
      `${registry.address}/skiff/pause:3.10`,
      `${registry.address}/skiff/curl:1`,
    ]);

    for (const image of [build.images.busybox, build.images.pause, build.images.curl]) {
      const response = await fetch(`${registry.url}/v2/${image.repository}/manifests/${image.tag}`, { headers: { accept: MANIFEST_MEDIA_TYPE } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(MANIFEST_MEDIA_TYPE);
      const body = Buffer.from(await response.arrayBuffer());
      // The layers go up uncompressed, as built, so the registry holds the very manifest of the layout.
      expect(sha256(body)).toBe(image.manifestDigest);
      expect(response.headers.get('docker-content-digest')).toBe(image.manifestDigest);
      const manifest = JSON.parse(body.toString('utf8')) as Manifest;
      const layer = await fetch(`${registry.url}/v2/${image.repository}/blobs/${manifest.layers[0].digest}`);
      expect(layer.status).toBe(200);
      expect(sha256(Buffer.from(await layer.arrayBuffer()))).toBe(manifest.layers[0].digest);
    }
  });

  it('stops the registry it started', async () => {
    const url = registry!.url;
    expect(await registry!.stop()).toBe(true);
    registry = undefined;
    await expect(fetch(`${url}/v2/`)).rejects.toThrow();
  });
});
