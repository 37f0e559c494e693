#!/usr/bin/env node
// The container images the real-container preset and its tests run, built on this machine from Debian's
// busybox-static, since no public registry is reachable here and no Debian package ships a pause image:
//   skiff.local/busybox:1    one layer: /bin/busybox and a symlink per applet, /www/index.html, /etc/passwd,
//                            /etc/group, /root, /tmp (1777); Cmd ["sh"]
//   skiff.local/pause:3.10   the same layer plus /pause (waits for TERM or INT, then exits 0); Entrypoint ["/pause"]
//   skiff.local/curl:1       the busybox layer plus Debian's curl and getent with the shared libraries they load
//                            and /etc/nsswitch.conf: clients that resolve names with glibc's resolver (search
//                            list, ndots), which busybox-static's wget cannot do once /etc/resolv.conf exists
// Each is written as an OCI image layout (<out>/busybox, <out>/pause, <out>/curl) and as an OCI archive of that
// layout (<out>/<name>.oci.tar) that `ctr images import` names from its index annotations.
// With --registry it also serves them from Debian's docker-registry on 127.0.0.1, as <HOST:PORT>/skiff/busybox:1,
// <HOST:PORT>/skiff/pause:3.10 and <HOST:PORT>/skiff/curl:1.
//
// usage: node scripts/test-images.mjs [--out DIR] [--registry HOST:PORT] [--stop]
//   --out DIR             where layouts, archives and registry storage go (default: .skiff/images in the repository)
//   --registry HOST:PORT  start a registry there unless one already answers, and push both images to it
//   --stop                stop the registry a previous --registry started from DIR
// A second run reuses the images when neither busybox nor this script changed.
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from './free-port.mjs';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DEFAULT_OUT = join(REPO_ROOT, '.skiff/images');

/** busybox-static installs /bin/busybox; on merged-/usr systems (Debian 12) that is also /usr/bin/busybox. */
const BUSYBOX_PATHS = ['/bin/busybox', '/usr/bin/busybox'];
const REGISTRY_BIN = 'docker-registry';

export const IMAGES = Object.freeze({
  busybox: Object.freeze({ name: 'skiff.local/busybox:1', repository: 'skiff/busybox', tag: '1' }),
  pause: Object.freeze({ name: 'skiff.local/pause:3.10', repository: 'skiff/pause', tag: '3.10' }),
  curl: Object.freeze({ name: 'skiff.local/curl:1', repository: 'skiff/curl', tag: '1' }),
});
const CURL = '/usr/bin/curl';
const GETENT = '/usr/bin/getent';
const NSSWITCH = 'passwd: files\ngroup: files\nhosts: files dns\n';

export const INDEX_HTML = 'skiff busybox\n';
const PATH_ENV = 'PATH=/usr/sbin:/usr/bin:/sbin:/bin';
// The sandbox's placeholder process. `sleep & wait` rather than a bare `sleep`, so a signal interrupts
// the wait and runs the trap at once instead of after the sleep ends.
const PAUSE_SCRIPT = `#!/bin/sh
trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $!; done
`;
const PASSWD = 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n';
const GROUP = 'root:x:0:\nnobody:x:65534:\n';

const MEDIA = Object.freeze({
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  // Layers stay uncompressed: the digest then depends only on GNU tar's output, not on a compressor's
  // version, it equals the diff ID, and the ~2 MB layer only ever crosses loopback.
  layer: 'application/vnd.oci.image.layer.v1.tar',
});
/** The epoch, so the same inputs give the same config digest on every machine. */
const CREATED = '1970-01-01T00:00:00Z';
const REPRODUCIBLE_TAR = ['--format=gnu', '--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner'];

const GOARCH = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' };

function run(command, args, options = {}) {
  return new Promise((resolvePromise) => {
    execFile(command, args, { maxBuffer: 64 * 1024 * 1024, ...options }, (error, stdout, stderr) =>
      resolvePromise({
        code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
        stdout,
        stderr: error && typeof error.code !== 'number' ? `${stderr}${error.message}` : stderr,
      }),
    );
  });
}

export async function runOrThrow(command, args, options) {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.code}):\n${result.stderr}${result.stdout}`);
  return result.stdout;
}

export function onPath(command) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, command)));
}

function sha256(bytes) {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

export function ociArchitecture(nodeArch = process.arch) {
  const arch = GOARCH[nodeArch];
  if (!arch) throw new Error(`no OCI architecture known for Node's ${nodeArch}`);
  return arch;
}

export function findBusybox() {
  return BUSYBOX_PATHS.find((path) => existsSync(path));
}

/** True when the ELF file asks for a program interpreter (ld.so), i.e. would not run in an empty image. */
export function isDynamicElf(bytes) {
  if (bytes.length < 64 || bytes.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF executable');
  const is64 = bytes[4] === 2;
  const little = bytes[5] === 1;
  const u16 = (offset) => (little ? bytes.readUInt16LE(offset) : bytes.readUInt16BE(offset));
  const u32 = (offset) => (little ? bytes.readUInt32LE(offset) : bytes.readUInt32BE(offset));
  const phoff = is64 ? Number(little ? bytes.readBigUInt64LE(32) : bytes.readBigUInt64BE(32)) : u32(28);
  const phentsize = u16(is64 ? 54 : 42);
  const phnum = u16(is64 ? 56 : 44);
  const PT_INTERP = 3;
  for (let i = 0; i < phnum; i++) if (u32(phoff + i * phentsize) === PT_INTERP) return true;
  return false;
}

/**
 * What this machine lacks to build the images (and, with `registry`, to serve and push them): one line
 * per missing thing, naming the Debian package. Empty when everything is there.
 */
export function missingPrerequisites({ registry = false } = {}) {
  const missing = [];
  if (process.platform !== 'linux') return [`container images are built on Linux only (this is ${process.platform})`];
  if (!findBusybox()) missing.push(`busybox (${BUSYBOX_PATHS.join(' or ')}; Debian package busybox-static)`);
  if (!onPath('tar')) missing.push('tar (Debian package tar)');
  if (!existsSync(CURL)) missing.push(`curl (${CURL}; Debian package curl)`);
  if (!onPath('ldd') || !existsSync(GETENT)) missing.push(`ldd and ${GETENT} (Debian package libc-bin)`);
  if (registry) {
    if (!onPath(REGISTRY_BIN)) missing.push(`${REGISTRY_BIN} (Debian package docker-registry)`);
    if (!onPath('skopeo')) missing.push('skopeo (Debian package skopeo)');
  }
  return missing;
}

/** The applets `busybox` names, less busybox itself: one symlink each in busyboxTree(). */
export async function busyboxApplets(busybox) {
  return (await runOrThrow(busybox, ['--list']))
    .split('\n')
    .map((line) => line.trim())
    .filter((applet) => applet && applet !== 'busybox' && !applet.includes('/'));
}

/** Makes a directory tree with exact modes, whatever the umask. */
export function makeDir(path, mode = 0o755) {
  mkdirSync(path, { recursive: true });
  chmodSync(path, mode);
}

export function writeFileMode(path, content, mode = 0o644) {
  writeFileSync(path, content);
  chmodSync(path, mode);
}

/** Tars `dir`'s entries with fixed order, times and owners, so equal trees give equal bytes. */
async function reproducibleTar(dir, file) {
  const entries = readdirSync(dir).sort();
  await runOrThrow('tar', ['--create', `--file=${file}`, ...REPRODUCIBLE_TAR, `--directory=${dir}`, '--', ...entries]);
}

export function busyboxTree(root, busyboxBytes, applets) {
  makeDir(root);
  makeDir(join(root, 'bin'));
  writeFileMode(join(root, 'bin/busybox'), busyboxBytes, 0o755);
  for (const applet of applets) symlinkSync('busybox', join(root, 'bin', applet));
  // For scripts that start with #!/usr/bin/env.
  makeDir(join(root, 'usr/bin'));
  symlinkSync('../../bin/busybox', join(root, 'usr/bin/env'));
  makeDir(join(root, 'etc'));
  writeFileMode(join(root, 'etc/passwd'), PASSWD);
  writeFileMode(join(root, 'etc/group'), GROUP);
  makeDir(join(root, 'root'), 0o700);
  makeDir(join(root, 'tmp'), 0o1777);
  makeDir(join(root, 'www'));
  writeFileMode(join(root, 'www/index.html'), INDEX_HTML);
}

/**
 * Host programs with every shared library `ldd` says they load, the dynamic loader included, as
 * `{ path, bytes }` (programs first, then the libraries by path), for a layer that runs them.
 */
export async function hostProgramFiles(programs) {
  const libraries = new Set();
  for (const program of programs) {
    const listing = await runOrThrow('ldd', [program]);
    const found = [...listing.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((match) => match[1]);
    if (!found.some((path) => path.includes('/ld-'))) throw new Error(`ldd ${program} names no dynamic loader:\n${listing}`);
    for (const path of found) libraries.add(path);
  }
  return [...programs, ...[...libraries].sort()].map((path) => ({ path, bytes: readFileSync(path) }));
}

/** The files of curl's layer: curl, getent and the shared libraries they load. */
function curlFiles() {
  return hostProgramFiles([CURL, GETENT]);
}

function curlTree(root, files) {
  makeDir(root);
  for (const { path, bytes } of files) {
    makeDir(join(root, path, '..'));
    writeFileMode(join(root, path), bytes, 0o755);
  }
  makeDir(join(root, 'etc'));
  writeFileMode(join(root, 'etc/nsswitch.conf'), NSSWITCH);
}

export function pauseTree(root) {
  makeDir(root);
  writeFileMode(join(root, 'pause'), PAUSE_SCRIPT, 0o755);
}

/** Builds a layer tar from a directory tree; returns its descriptor and bytes. */
export async function buildLayer(workDir, name, fillTree) {
  const root = join(workDir, name);
  fillTree(root);
  const file = join(workDir, `${name}.tar`);
  await reproducibleTar(root, file);
  const bytes = readFileSync(file);
  return { bytes, descriptor: { mediaType: MEDIA.layer, digest: sha256(bytes), size: bytes.length } };
}

function writeBlob(layoutDir, bytes) {
  const digest = sha256(bytes);
  const path = join(layoutDir, 'blobs', ...digest.split(':'));
  if (!existsSync(path)) writeFileMode(path, bytes);
  return { digest, size: bytes.length };
}

function imageConfig({ architecture, layers, entrypoint, cmd, createdBy, config: extra }) {
  const config = { Env: [PATH_ENV], WorkingDir: '/' };
  if (entrypoint) config.Entrypoint = entrypoint;
  if (cmd) config.Cmd = cmd;
  Object.assign(config, extra);
  return {
    created: CREATED,
    architecture,
    os: 'linux',
    config,
    rootfs: { type: 'layers', diff_ids: layers.map((layer) => layer.descriptor.digest) },
    history: createdBy.map((created_by) => ({ created: CREATED, created_by })),
  };
}

/**
 * Writes one image as an OCI layout in `layoutDir` and tars that layout to `archive`. `config` (Env, User,
 * WorkingDir, Labels, …) replaces or adds to the image config's defaults.
 */
export async function writeImage({ layoutDir, archive, image, architecture, layers, entrypoint, cmd, createdBy, config }) {
  rmSync(layoutDir, { recursive: true, force: true });
  makeDir(join(layoutDir, 'blobs/sha256'));
  writeFileMode(join(layoutDir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  for (const layer of layers) writeBlob(layoutDir, layer.bytes);
  const configBlob = writeBlob(layoutDir, Buffer.from(JSON.stringify(imageConfig({ architecture, layers, entrypoint, cmd, createdBy, config }))));
  const manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, ...configBlob },
    layers: layers.map((layer) => layer.descriptor),
  };
  const manifestBlob = writeBlob(layoutDir, Buffer.from(JSON.stringify(manifest)));
  // ref.name is the tag, as the image-layout spec means it and as `skopeo copy oci:<layout>:<tag>` looks
  // it up; containerd's importer takes the full name from io.containerd.image.name.
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [
      {
        mediaType: MEDIA.manifest,
        ...manifestBlob,
        platform: { architecture, os: 'linux' },
        annotations: { 'io.containerd.image.name': image.name, 'org.opencontainers.image.ref.name': image.tag },
      },
    ],
  };
  writeFileMode(join(layoutDir, 'index.json'), JSON.stringify(index));
  await reproducibleTar(layoutDir, `${archive}.partial`);
  renameSync(`${archive}.partial`, archive);
  return {
    ...image,
    layout: layoutDir,
    archive,
    manifestDigest: manifestBlob.digest,
    configDigest: configBlob.digest,
    layerDigests: layers.map((layer) => layer.descriptor.digest),
  };
}

/** What the images are made from: busybox, this script (the recipe) and the target architecture. */
function fingerprint(busyboxBytes, architecture, extraFiles = []) {
  return sha256(
    Buffer.concat([
      busyboxBytes,
      readFileSync(fileURLToPath(import.meta.url)),
      Buffer.from(architecture),
      ...extraFiles.flatMap((file) => [Buffer.from(file.path), file.bytes]),
    ]),
  );
}

function readStamp(stampFile) {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Builds skiff.local/busybox:1 and skiff.local/pause:3.10 into `out` as OCI layouts and OCI archives,
 * or reuses what an earlier build left there when busybox and this script are unchanged.
 */
export async function buildTestImages({ out = DEFAULT_OUT, busybox = findBusybox() } = {}) {
  const missing = missingPrerequisites();
  if (missing.length > 0) throw new Error(`cannot build the test images; missing: ${missing.join(', ')}`);
  const started = performance.now();
  const outDir = resolve(out);
  const busyboxBytes = readFileSync(busybox);
  if (isDynamicElf(busyboxBytes)) throw new Error(`${busybox} is dynamically linked (Debian's busybox); the images need busybox-static`);
  const architecture = ociArchitecture();
  const stampFile = join(outDir, 'images.json');
  const curl = await curlFiles();
  const print = fingerprint(busyboxBytes, architecture, curl);
  const stamp = readStamp(stampFile);
  if (stamp?.fingerprint === print && Object.values(stamp.images).every((image) => existsSync(join(image.layout, 'index.json')) && existsSync(image.archive))) {
    return { out: outDir, architecture, reused: true, seconds: (performance.now() - started) / 1000, images: stamp.images };
  }

  makeDir(outDir);
  const workDir = join(outDir, `.work-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  makeDir(workDir);
  const applets = await busyboxApplets(busybox);
  const base = await buildLayer(workDir, 'busybox-rootfs', (root) => busyboxTree(root, busyboxBytes, applets));
  const pauseLayer = await buildLayer(workDir, 'pause-rootfs', pauseTree);
  const curlLayer = await buildLayer(workDir, 'curl-rootfs', (root) => curlTree(root, curl));
  const version = /BusyBox v\S+/.exec(await runOrThrow(busybox, ['--help']).catch(() => ''))?.[0] ?? 'BusyBox';
  const baseHistory = `${version}: /bin/busybox and ${applets.length} applet links, /www/index.html, /etc/passwd, /etc/group`;
  const images = {
    busybox: await writeImage({
      layoutDir: join(outDir, 'busybox'),
      archive: join(outDir, 'busybox.oci.tar'),
      image: IMAGES.busybox,
      architecture,
      layers: [base],
      cmd: ['sh'],
      createdBy: [baseHistory],
    }),
    pause: await writeImage({
      layoutDir: join(outDir, 'pause'),
      archive: join(outDir, 'pause.oci.tar'),
      image: IMAGES.pause,
      architecture,
      layers: [base, pauseLayer],
      entrypoint: ['/pause'],
      createdBy: [baseHistory, '/pause: sleeps until TERM or INT, then exits 0'],
    }),
    curl: await writeImage({
      layoutDir: join(outDir, 'curl'),
      archive: join(outDir, 'curl.oci.tar'),
      image: IMAGES.curl,
      architecture,
      layers: [base, curlLayer],
      cmd: ['sh'],
      createdBy: [baseHistory, `${CURL}, ${GETENT} and the ${curl.length - 2} shared libraries they load, /etc/nsswitch.conf`],
    }),
  };
  rmSync(workDir, { recursive: true, force: true });
  writeFileSync(stampFile, `${JSON.stringify({ fingerprint: print, images }, null, 2)}\n`);
  return { out: outDir, architecture, reused: false, seconds: (performance.now() - started) / 1000, images };
}

/** True when a Docker registry (API v2) answers at http://address/v2/. */
async function registryAnswers(address) {
  try {
    const response = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.headers.has('docker-distribution-api-version');
  } catch {
    return false;
  }
}

function registryFiles(outDir) {
  return {
    pidFile: join(outDir, 'registry.pid'),
    configFile: join(outDir, 'registry.yml'),
    logFile: join(outDir, 'registry.log'),
    storage: join(outDir, 'registry'),
  };
}

/** The pid of the docker-registry started from `outDir` with its config, if it still runs. */
function ownRegistryPid(outDir) {
  const { pidFile, configFile } = registryFiles(outDir);
  let pid;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').trim());
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0];
    // A recycled pid belongs to some other program; a zombie has already stopped.
    if (state !== 'Z' && cmdline.some((arg) => arg.endsWith(REGISTRY_BIN)) && cmdline.includes(configFile)) return pid;
  } catch {
    // no pid file, or that process is gone
  }
  return undefined;
}

function ownRegistryAddress(outDir) {
  try {
    return JSON.parse(readFileSync(registryFiles(outDir).configFile, 'utf8')).http.addr;
  } catch {
    return undefined;
  }
}

function registryConfig(storage, listen, auth) {
  // JSON is YAML, so docker-registry reads this as its config file.
  return {
    version: '0.1',
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: storage }, delete: { enabled: true }, cache: { blobdescriptor: 'inmemory' } },
    http: { addr: listen, secret: randomBytes(16).toString('hex'), headers: { 'X-Content-Type-Options': ['nosniff'] } },
    ...(auth ? { auth: { htpasswd: { realm: 'skiff-test-registry', path: resolve(auth.htpasswd) } } } : {}),
  };
}

function isLoopback(host) {
  return host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function parseAddress(address) {
  const match = /^([^:]+):(\d+)$/.exec(address);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) throw new Error(`--registry wants HOST:PORT (e.g. 127.0.0.1:5000), not ${address}`);
  if (!isLoopback(match[1])) throw new Error(`the test registry listens on loopback only; ${match[1]} is not 127.0.0.1 or localhost`);
  return { host: match[1], port: Number(match[2]) };
}

function processGone(pid) {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] === 'Z';
  } catch {
    return true;
  }
}

async function waitUntil(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
  }
  return false;
}

/** Stops the registry started from `out`; false when none was running. */
export async function stopRegistry({ out = DEFAULT_OUT } = {}) {
  const outDir = resolve(out);
  const pid = ownRegistryPid(outDir);
  if (pid !== undefined) {
    process.kill(pid, 'SIGTERM');
    if (!(await waitUntil(() => processGone(pid), 5000))) process.kill(pid, 'SIGKILL');
  }
  rmSync(registryFiles(outDir).pidFile, { force: true });
  return pid !== undefined;
}

/**
 * Makes sure a registry answers on 127.0.0.1:`port` (a free port when not given): reuses one that already
 * does, or starts Debian's docker-registry with storage under `<out>/registry`, detached, so it outlives
 * this process until stop() or `--stop`. stop() stops it only if it was started from `out`.
 * With `auth.htpasswd` (an htpasswd file of bcrypt entries) a registry it starts asks for basic auth.
 */
export async function startRegistry({ out = DEFAULT_OUT, port, host = '127.0.0.1', auth } = {}) {
  const outDir = resolve(out);
  const listenPort = port ?? (await freePort());
  const address = `${host}:${listenPort}`;
  parseAddress(address);
  const files = registryFiles(outDir);
  const ownPid = ownRegistryPid(outDir);
  const ownAddress = ownPid !== undefined ? ownRegistryAddress(outDir) : undefined;
  const handle = (started) => ({
    url: `http://${address}`,
    address,
    started,
    storage: files.storage,
    stop: async () => (ownAddress === `127.0.0.1:${listenPort}` || started ? stopRegistry({ out: outDir }) : false),
  });
  if (ownPid !== undefined && ownAddress !== `127.0.0.1:${listenPort}`) {
    throw new Error(
      `the registry started from ${outDir} runs on ${ownAddress} (pid ${ownPid}); stop it first: node scripts/test-images.mjs --stop --out ${outDir}`,
    );
  }
  if (await registryAnswers(address)) return handle(false);
  const missing = missingPrerequisites({ registry: true });
  if (missing.length > 0) throw new Error(`cannot start a registry; missing: ${missing.join(', ')}`);

  makeDir(files.storage);
  writeFileSync(files.configFile, JSON.stringify(registryConfig(files.storage, `127.0.0.1:${listenPort}`, auth), null, 2));
  const log = openSync(files.logFile, 'w');
  // REGISTRY_* variables would override the config file.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('REGISTRY_')));
  const child = spawn(REGISTRY_BIN, ['serve', files.configFile], { detached: true, stdio: ['ignore', log, log], env, cwd: outDir });
  closeSync(log);
  const spawnFailed = new Promise((resolvePromise) => child.once('error', resolvePromise));
  child.unref();
  writeFileSync(files.pidFile, `${child.pid}\n`);
  const up = await waitUntil(async () => child.exitCode === null && (await registryAnswers(address)), 15_000);
  if (!up) {
    const error = await Promise.race([spawnFailed, Promise.resolve(undefined)]);
    await stopRegistry({ out: outDir });
    const logText = existsSync(files.logFile) ? readFileSync(files.logFile, 'utf8').trim() : '';
    throw new Error(`${REGISTRY_BIN} did not answer http://${address}/v2/ within 15 s${error ? `: ${error.message}` : ''}${logText ? `:\n${logText}` : ''}`);
  }
  return handle(true);
}

/**
 * Pushes both images from their OCI layouts to the registry at `address` (HOST:PORT), logging in with
 * `auth` when given; returns their references.
 */
export async function pushTestImages(build, address, { auth } = {}) {
  parseAddress(address);
  const pushed = [];
  for (const image of Object.values(build.images)) {
    const reference = `${address}/${image.repository}:${image.tag}`;
    // --insecure-policy: these are our own images, so no signature policy applies; --preserve-digests keeps
    // the uncompressed layers as they are, so the registry serves the same manifest digest as the layout.
    await runOrThrow('skopeo', [
      '--insecure-policy',
      'copy',
      '--quiet',
      '--preserve-digests',
      '--dest-tls-verify=false',
      ...(auth ? [`--dest-creds=${auth.username}:${auth.password}`] : []),
      `oci:${image.layout}:${image.tag}`,
      `docker://${reference}`,
    ]);
    pushed.push({ reference, manifestDigest: image.manifestDigest });
  }
  return pushed;
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      registry: { type: 'string' },
      stop: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node scripts/test-images.mjs [--out DIR] [--registry HOST:PORT] [--stop]');
    return;
  }
  const out = resolve(values.out ?? DEFAULT_OUT);
  if (values.stop) {
    console.log((await stopRegistry({ out })) ? `stopped the registry started from ${out}` : `no registry started from ${out} is running`);
    return;
  }
  const target = values.registry ? parseAddress(values.registry) : undefined;
  const build = await buildTestImages({ out });
  for (const image of Object.values(build.images)) {
    console.log(`${image.name}  ${image.manifestDigest}`);
    console.log(`  layout ${image.layout}  archive ${image.archive}`);
  }
  console.log(`${build.reused ? 'reused' : 'built'} in ${build.seconds.toFixed(2)}s (${build.architecture})`);
  if (!target) return;
  const registry = await startRegistry({ out, host: target.host, port: target.port });
  console.log(`registry: ${registry.url} (${registry.started ? `started, storage ${registry.storage}` : 'already running'})`);
  const started = performance.now();
  const pushed = await pushTestImages(build, values.registry);
  for (const { reference } of pushed) console.log(`  pushed ${reference}`);
  console.log(`pushed in ${((performance.now() - started) / 1000).toFixed(2)}s`);
  if (registry.started) console.log(`stop it: node scripts/test-images.mjs --stop --out ${out}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`test-images: ${err.message}`);
    process.exit(1);
  });
}
