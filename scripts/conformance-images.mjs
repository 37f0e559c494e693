#!/usr/bin/env node
// Stand-ins for the images upstream Kubernetes v1.28.7's [Conformance] tests run in their pods, which no
// registry reachable here serves. Built on this machine, without docker, from upstream's own agnhost and
// sample-apiserver (compiled from the tree ../shared/upstream/build.sh extracted) and Debian's binaries, each
// under the exact name and tag the suite asks for, pushed to Debian's docker-registry on 127.0.0.1; then a
// KUBE_TEST_REPO_LIST file that points the suite at that registry.
//
//   image (after the registry)                what it is                                      runs
//   e2e-test-images/agnhost:2.45              /agnhost (+ /agnhost-2 link), /uploads,          /agnhost pause
//                                             /localhost.crt and .key; busybox, bash (also
//                                             /bin/sh), curl, getent, dig, nslookup, host, nc
//   e2e-test-images/jessie-dnsutils:1.7       busybox and the same tools (dig, getent, curl)   sh
//   e2e-test-images/busybox:1.29-4            busybox-static, an applet link each; bash as    sh
//                                             /bin/sh (ash drops env names like data-1)
//   e2e-test-images/nonroot:1.4               busybox and bash, user 1234                     sh
//   e2e-test-images/nonewprivs:1.3            busybox, /usr/local/bin/nnp (setuid root):      nnp
//                                             prints "Effective uid: N"
//   e2e-test-images/httpd:2.4.38-4, 2.4.39-4  busybox httpd on :80 serving                    httpd -f -p 80 …
//                                             /usr/local/apache2/htdocs ("It works!")
//   e2e-test-images/nginx:1.14-4, 1.15-4      busybox httpd on :80 serving /usr/share/nginx/html
//   e2e-test-images/kitten:1.7, nautilus:1.7  agnhost plus /data.json ({"image": "kitten.jpg"})  agnhost test-webserver
//   e2e-test-images/sample-apiserver:1.17.7   busybox, /sample-apiserver (v1.28.7's)           /sample-apiserver
//   etcd:3.5.10-0                             busybox, Debian's etcd as /usr/local/bin/etcd    etcd
//   pause:3.9                                 /pause alone (waits for TERM or INT)            /pause, user 65535
// Registry paths mirror upstream's (e2e-test-images under registry.k8s.io/), so the repo list maps
// promoterE2eRegistry, gcRegistry and gcEtcdRegistry to <HOST:PORT>/registry.k8s.io/…; the other
// registries keep upstream's values: nothing here serves them, and the few tests that use them expect a
// failed pull anyway. Images of the same upstream kind differ in a config label only, so each tag has its
// own image ID (containerd reports a container's image by the ID's first tag).
//
// usage: node scripts/conformance-images.mjs [--out DIR] [--registry HOST:PORT] [--build-only] [--stop]
//   --out DIR             layouts, archives, binaries, registry storage, repo-list.yaml (default .skiff/conformance-images)
//   --registry HOST:PORT  the loopback registry to push to, started unless one answers (default 127.0.0.1:5000)
//   --build-only          build the layouts and the repo list, push nothing
//   --stop                stop the registry a previous run started from DIR
// UPSTREAM (default ~/upstream) is where build.sh put upstream's source and binaries. sample-apiserver, nnp,
// pause and the localhost certificate are built once into <out>/bin (remove it to build them again); the
// images are built again whenever an input changed, and reused otherwise. Without a registry,
// `skiff image import <out>/*.oci.tar` loads them into a running cluster under upstream's own names.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  busyboxApplets,
  busyboxTree,
  buildLayer,
  findBusybox,
  hostProgramFiles,
  isDynamicElf,
  makeDir,
  missingPrerequisites,
  ociArchitecture,
  onPath,
  pushTestImages,
  runOrThrow,
  startRegistry,
  stopRegistry,
  writeFileMode,
  writeImage,
} from './test-images.mjs';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DEFAULT_OUT = join(REPO_ROOT, '.skiff/conformance-images');
export const DEFAULT_REGISTRY = '127.0.0.1:5000';
const BUILD_HINT = 'run ../shared/upstream/build.sh';
const GO = '/usr/lib/go-1.21/bin/go';

/** Upstream's registries, as manifest.go's RegistryList names them in YAML, and their v1.28.7 values. */
export const UPSTREAM_REGISTRIES = Object.freeze({
  gcAuthenticatedRegistry: 'gcr.io/authenticated-image-pulling',
  promoterE2eRegistry: 'registry.k8s.io/e2e-test-images',
  buildImageRegistry: 'registry.k8s.io/build-image',
  invalidRegistry: 'invalid.registry.k8s.io/invalid',
  gcEtcdRegistry: 'registry.k8s.io',
  gcRegistry: 'registry.k8s.io',
  sigStorageRegistry: 'registry.k8s.io/sig-storage',
  privateRegistry: 'gcr.io/k8s-authenticated-test',
  microsoftRegistry: 'mcr.microsoft.com',
  dockerLibraryRegistry: 'docker.io/library',
  cloudProviderGcpRegistry: 'registry.k8s.io/cloud-provider-gcp',
});
/** The registries whose images are built here; the rest keep upstream's value in the repo list. */
const SERVED = ['promoterE2eRegistry', 'gcRegistry', 'gcEtcdRegistry'];

// The tools of agnhost's and jessie-dnsutils' layer: what the tests run in those pods besides busybox
// (curl -g/-w/--interface, dig +search/+tcp, getent hosts with glibc's resolver, nc -u/-v/-t, bash).
// curl and getent are test-images.mjs's own prerequisites; the others are listed here by package.
const TOOLS = Object.freeze(['/usr/bin/curl', '/usr/bin/getent', '/usr/bin/dig', '/usr/bin/nslookup', '/usr/bin/host', '/usr/bin/nc.openbsd', '/usr/bin/bash']);
const ETCD = '/usr/bin/etcd';
// The shell of the busybox-based images that run `sh -c`: busybox's ash leaves variables whose names are not
// shell identifiers (`data-1`, from envFrom) out of the environment of what it runs; upstream's busybox 1.29
// and bash pass them on, and the Secret and ConfigMap envFrom tests print them with `sh -c env`.
const BASH = '/usr/bin/bash';
const DEBIAN_PACKAGES = Object.freeze([
  { paths: ['/usr/bin/dig', '/usr/bin/nslookup', '/usr/bin/host'], name: 'bind9-dnsutils' },
  { paths: ['/usr/bin/nc.openbsd'], name: 'netcat-openbsd' },
  { paths: ['/usr/bin/bash'], name: 'bash' },
  { paths: [ETCD], name: 'etcd-server' },
]);

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const NSSWITCH = 'passwd: files\ngroup: files\nhosts: files dns\n';
// agnhost's image defines this user and group; node e2e tests run as them by name.
const AGNHOST_PASSWD =
  'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\nuser-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n';
const AGNHOST_GROUP = 'root:x:0:\nnobody:x:65534:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n';
const HTTPD_INDEX = '<html><body><h1>It works!</h1></body></html>\n';
const NGINX_INDEX = '<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>\n';
// Two small programs of our own, built with upstream's Go. nnp (nonewprivs): the tests compare its one line.
// pause: a static binary, not a script, since it runs as user 65535 and needs to read nothing; it reaps
// children (PID 1 of a pod sharing its PID namespace) and exits 0 on TERM or INT.
const GO_PROGRAMS = Object.freeze({
  nnp: `package main

import (
\t"fmt"
\t"os"
)

func main() {
\tfmt.Printf("Effective uid: %d\\n", os.Geteuid())
}
`,
  pause: `package main

import (
\t"os"
\t"os/signal"
\t"syscall"
)

func main() {
\tsignals := make(chan os.Signal, 8)
\tsignal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
\tfor received := range signals {
\t\tif received != syscall.SIGCHLD {
\t\t\tos.Exit(0)
\t\t}
\t\tfor {
\t\t\tpid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
\t\t\tif pid <= 0 || err != nil {
\t\t\t\tbreak
\t\t\t}
\t\t}
\t}
}
`,
});

function upstreamDir() {
  return resolve(process.env.UPSTREAM ?? join(homedir(), 'upstream'));
}

function inputs(upstream = upstreamDir()) {
  return {
    upstream,
    agnhost: join(upstream, 'bin/agnhost'),
    sampleApiserverMain: join(upstream, 'src/staging/src/k8s.io/sample-apiserver/main.go'),
  };
}

/**
 * What this machine lacks to build (and, with `registry`, to push) the stand-ins: one entry per missing
 * thing, saying how to get it. Empty when everything is there.
 */
export function missingConformancePrerequisites({ registry = false, upstream } = {}) {
  const paths = inputs(upstream);
  const missing = missingPrerequisites({ registry });
  if (!existsSync(paths.agnhost)) missing.push(`agnhost not built (${paths.agnhost}): ${BUILD_HINT}`);
  if (!existsSync(paths.sampleApiserverMain)) missing.push(`upstream source not extracted (${paths.sampleApiserverMain}): ${BUILD_HINT}`);
  if (!existsSync(GO)) missing.push(`Go 1.21 (${GO}): ${BUILD_HINT}, which installs it`);
  for (const { paths: files, name } of DEBIAN_PACKAGES) {
    const absent = files.filter((path) => !existsSync(path));
    if (absent.length > 0) missing.push(`${absent.join(', ')} (Debian package ${name})`);
  }
  if (!onPath('openssl')) missing.push('openssl (Debian package openssl)');
  return missing;
}

function goEnv(upstream) {
  return {
    ...process.env,
    PATH: `${dirname(GO)}:${process.env.PATH ?? ''}`,
    GOTOOLCHAIN: 'local',
    GOPROXY: 'off',
    GOSUMDB: 'off',
    CGO_ENABLED: '0',
    GOCACHE: join(upstream, '.cache/go-build'),
    GOPATH: join(upstream, '.cache/gopath'),
  };
}

/**
 * The binaries built here, once, into <out>/bin: sample-apiserver from upstream's tree (the flags and
 * cache build.sh uses, so the packages kube-apiserver shares with it are not compiled again), nnp, pause,
 * and a self-signed certificate for localhost (agnhost's image ships one for its HTTPS servers).
 */
async function buildBinaries(outDir, upstream, log) {
  const binDir = join(outDir, 'bin');
  makeDir(binDir);
  const files = {
    sampleApiserver: join(binDir, 'sample-apiserver'),
    nnp: join(binDir, 'nnp'),
    pause: join(binDir, 'pause'),
    crt: join(binDir, 'localhost.crt'),
    key: join(binDir, 'localhost.key'),
  };
  const env = goEnv(upstream);
  if (!existsSync(files.sampleApiserver)) {
    log('building sample-apiserver from the upstream tree (a few minutes the first time)');
    await runOrThrow(
      GO,
      ['build', '-tags', 'providerless', '-trimpath', '-ldflags', '-s -w', '-o', `${files.sampleApiserver}.partial`, 'k8s.io/sample-apiserver'],
      { cwd: join(upstream, 'src'), env: { ...env, GOFLAGS: '-mod=vendor' } },
    );
    renameSync(`${files.sampleApiserver}.partial`, files.sampleApiserver);
  }
  for (const [name, source] of Object.entries(GO_PROGRAMS)) {
    if (existsSync(files[name])) continue;
    const work = join(binDir, `.${name}`);
    rmSync(work, { recursive: true, force: true });
    makeDir(work);
    writeFileSync(join(work, 'main.go'), source);
    await runOrThrow(GO, ['build', '-trimpath', '-ldflags', '-s -w', '-o', files[name], 'main.go'], {
      cwd: work,
      env: { ...env, GOFLAGS: '', GO111MODULE: 'on' },
    });
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(files.crt) || !existsSync(files.key)) {
    await runOrThrow('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '3650',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      files.key,
      '-out',
      files.crt,
    ]);
  }
  return files;
}

function sha256(bytes) {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function readStamp(stampFile) {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Writes `files` ({ path, bytes }) under `root` at their own paths, executable. */
function hostFilesTree(root, files) {
  for (const { path, bytes } of files) {
    makeDir(join(root, path, '..'));
    writeFileMode(join(root, path), bytes, 0o755);
  }
}

function toolsTree(root, files) {
  makeDir(root);
  hostFilesTree(root, files);
  symlinkSync('nc.openbsd', join(root, 'usr/bin/nc'));
  // busybox's tree has /bin as a directory of applets; tests name /bin/bash. bash is /bin/sh too: Debian's
  // busybox-static shell runs its own applet for a command of that name (nc, nslookup) whatever PATH says.
  makeDir(join(root, 'bin'));
  symlinkSync('../usr/bin/bash', join(root, 'bin/bash'));
  symlinkSync('../usr/bin/bash', join(root, 'bin/sh'));
  makeDir(join(root, 'etc'));
  writeFileMode(join(root, 'etc/nsswitch.conf'), NSSWITCH);
}

function shellTree(root, files) {
  makeDir(root);
  hostFilesTree(root, files);
  makeDir(join(root, 'bin'));
  symlinkSync('../usr/bin/bash', join(root, 'bin/bash'));
  symlinkSync('../usr/bin/bash', join(root, 'bin/sh'));
}

function agnhostTree(root, binaries, agnhostBytes) {
  makeDir(root);
  writeFileMode(join(root, 'agnhost'), agnhostBytes, 0o755);
  symlinkSync('agnhost', join(root, 'agnhost-2'));
  makeDir(join(root, 'uploads'));
  writeFileMode(join(root, 'localhost.crt'), readFileSync(binaries.crt));
  // Readable by any user, as in agnhost's image: a throw-away key for test servers on localhost.
  writeFileMode(join(root, 'localhost.key'), readFileSync(binaries.key));
  makeDir(join(root, 'etc'));
  writeFileMode(join(root, 'etc/passwd'), AGNHOST_PASSWD);
  writeFileMode(join(root, 'etc/group'), AGNHOST_GROUP);
  makeDir(join(root, 'home/user-defined-in-image'));
}

function webTree(root, dir, file, content) {
  makeDir(join(root, dir));
  writeFileMode(join(root, dir, file), content);
}

/** The stand-ins: upstream name, layers (keys of the layers built), config, history line of the top layer. */
function recipes(registries) {
  const e2e = registries.promoterE2eRegistry;
  const httpd = ['httpd', '-f', '-v', '-p', '80', '-h'];
  return [
    { id: 'agnhost', name: `${e2e}/agnhost:2.45`, layers: ['busybox', 'tools', 'agnhost'], entrypoint: ['/agnhost'], cmd: ['pause'] },
    { id: 'jessie-dnsutils', name: `${e2e}/jessie-dnsutils:1.7`, layers: ['busybox', 'tools'], cmd: ['sh'] },
    { id: 'busybox', name: `${e2e}/busybox:1.29-4`, layers: ['busybox', 'shell'], cmd: ['sh'] },
    { id: 'nonroot', name: `${e2e}/nonroot:1.4`, layers: ['busybox', 'shell'], cmd: ['sh'], config: { User: '1234' } },
    { id: 'nonewprivs', name: `${e2e}/nonewprivs:1.3`, layers: ['busybox', 'nnp'], cmd: ['nnp'] },
    ...['2.4.38-4', '2.4.39-4'].map((tag) => ({
      id: `httpd-${tag}`,
      name: `${e2e}/httpd:${tag}`,
      layers: ['busybox', 'httpd'],
      cmd: [...httpd, '/usr/local/apache2/htdocs'],
      config: { WorkingDir: '/usr/local/apache2' },
    })),
    ...['1.14-4', '1.15-4'].map((tag) => ({
      id: `nginx-${tag}`,
      name: `${e2e}/nginx:${tag}`,
      layers: ['busybox', 'nginx'],
      cmd: [...httpd, '/usr/share/nginx/html'],
    })),
    ...['kitten', 'nautilus'].map((id) => ({
      id,
      name: `${e2e}/${id}:1.7`,
      layers: ['busybox', 'tools', 'agnhost', id],
      entrypoint: ['/agnhost'],
      cmd: ['test-webserver'],
    })),
    { id: 'sample-apiserver', name: `${e2e}/sample-apiserver:1.17.7`, layers: ['busybox', 'sample-apiserver'], entrypoint: ['/sample-apiserver'] },
    { id: 'etcd', name: `${registries.gcEtcdRegistry}/etcd:3.5.10-0`, layers: ['busybox', 'etcd'], cmd: ['/usr/local/bin/etcd'] },
    { id: 'pause', name: `${registries.gcRegistry}/pause:3.9`, layers: ['pause'], entrypoint: ['/pause'], config: { User: '65535:65535' } },
  ];
}

/** `registry.k8s.io/e2e-test-images/agnhost:2.45` → its name, repository and tag. */
function imageName(name) {
  const colon = name.lastIndexOf(':');
  return { name, repository: name.slice(0, colon), tag: name.slice(colon + 1) };
}

/**
 * Builds every stand-in into `out` as OCI layouts and archives (named with upstream's names, so
 * `ctr images import` or `skiff image import` gives the names the suite asks for), or reuses an earlier
 * build from the same inputs.
 */
export async function buildConformanceImages({ out = DEFAULT_OUT, upstream = upstreamDir(), log = () => {} } = {}) {
  const missing = missingConformancePrerequisites({ upstream });
  if (missing.length > 0) throw new Error(`cannot build the conformance images; missing: ${missing.join('; ')}`);
  const started = performance.now();
  const outDir = resolve(out);
  const paths = inputs(upstream);
  const busybox = findBusybox();
  const busyboxBytes = readFileSync(busybox);
  if (isDynamicElf(busyboxBytes)) throw new Error(`${busybox} is dynamically linked (Debian's busybox); the images need busybox-static`);
  const agnhostBytes = readFileSync(paths.agnhost);
  if (isDynamicElf(agnhostBytes)) throw new Error(`${paths.agnhost} is dynamically linked; build it with CGO_ENABLED=0 (${BUILD_HINT})`);
  const architecture = ociArchitecture();
  const binaries = await buildBinaries(outDir, upstream, log);
  const tools = await hostProgramFiles(TOOLS);
  const shell = await hostProgramFiles([BASH]);
  const etcd = (await hostProgramFiles([ETCD])).map((file) => (file.path === ETCD ? { ...file, path: '/usr/local/bin/etcd' } : file));

  const inputBytes = [
    readFileSync(fileURLToPath(import.meta.url)),
    readFileSync(fileURLToPath(new URL('./test-images.mjs', import.meta.url))),
    Buffer.from(architecture),
    busyboxBytes,
    agnhostBytes,
    ...Object.values(binaries).map((path) => readFileSync(path)),
    ...[...tools, ...shell, ...etcd].flatMap((file) => [Buffer.from(file.path), file.bytes]),
  ];
  const fingerprint = sha256(Buffer.concat(inputBytes));
  const stampFile = join(outDir, 'images.json');
  const stamp = readStamp(stampFile);
  if (
    stamp?.fingerprint === fingerprint &&
    Object.values(stamp.images).every((image) => existsSync(join(image.layout, 'index.json')) && existsSync(image.archive))
  ) {
    return { out: outDir, architecture, reused: true, seconds: (performance.now() - started) / 1000, images: stamp.images };
  }

  const workDir = join(outDir, `.work-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  makeDir(workDir);
  try {
    const applets = await busyboxApplets(busybox);
    const version = /BusyBox v\S+/.exec(await runOrThrow(busybox, ['--help']).catch(() => ''))?.[0] ?? 'BusyBox';
    const layerRecipes = {
      busybox: [(root) => busyboxTree(root, busyboxBytes, applets), `${version}: /bin/busybox and ${applets.length} applet links, /etc/passwd, /etc/group`],
      tools: [
        (root) => toolsTree(root, tools),
        `Debian's ${TOOLS.map((path) => path.split('/').pop()).join(', ')} and the ${tools.length - TOOLS.length} libraries they load`,
      ],
      shell: [(root) => shellTree(root, shell), `Debian's bash as /bin/sh and /bin/bash, and the ${shell.length - 1} libraries it loads`],
      agnhost: [(root) => agnhostTree(root, binaries, agnhostBytes), "/agnhost (upstream's v1.28.7 source), /agnhost-2, /uploads, /localhost.crt and .key"],
      nnp: [
        (root) => writeFileMode(join(makeDirOf(root, 'usr/local/bin'), 'nnp'), readFileSync(binaries.nnp), 0o4755),
        '/usr/local/bin/nnp, setuid root: prints its effective uid',
      ],
      httpd: [(root) => webTree(root, 'usr/local/apache2/htdocs', 'index.html', HTTPD_INDEX), '/usr/local/apache2/htdocs/index.html'],
      nginx: [(root) => webTree(root, 'usr/share/nginx/html', 'index.html', NGINX_INDEX), '/usr/share/nginx/html/index.html'],
      kitten: [(root) => webTree(root, '', 'data.json', '{"image": "kitten.jpg"}\n'), '/data.json'],
      nautilus: [(root) => webTree(root, '', 'data.json', '{"image": "nautilus.jpg"}\n'), '/data.json'],
      'sample-apiserver': [
        (root) => writeFileMode(join(makeDirOf(root, ''), 'sample-apiserver'), readFileSync(binaries.sampleApiserver), 0o755),
        "/sample-apiserver (upstream's v1.28.7 source)",
      ],
      etcd: [(root) => hostFilesTree(makeDirOf(root, ''), etcd), `Debian's etcd as /usr/local/bin/etcd and the ${etcd.length - 1} libraries it loads`],
      pause: [
        (root) => writeFileMode(join(makeDirOf(root, ''), 'pause'), readFileSync(binaries.pause), 0o755),
        '/pause: waits for TERM or INT, reaping children, then exits 0',
      ],
    };
    const layers = {};
    for (const [key, [fill, history]] of Object.entries(layerRecipes)) layers[key] = { ...(await buildLayer(workDir, `${key}-rootfs`, fill)), history };

    const images = {};
    for (const recipe of recipes(UPSTREAM_REGISTRIES)) {
      const image = imageName(recipe.name);
      images[recipe.id] = await writeImage({
        layoutDir: join(outDir, recipe.id),
        archive: join(outDir, `${recipe.id}.oci.tar`),
        image,
        architecture,
        layers: recipe.layers.map((key) => layers[key]),
        entrypoint: recipe.entrypoint,
        cmd: recipe.cmd,
        createdBy: recipe.layers.map((key) => layers[key].history),
        config: { Env: [PATH_ENV], ...recipe.config, Labels: { 'io.skiff.stand-in-for': recipe.name } },
      });
    }
    writeFileSync(stampFile, `${JSON.stringify({ fingerprint, images }, null, 2)}\n`);
    return { out: outDir, architecture, reused: false, seconds: (performance.now() - started) / 1000, images };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

function makeDirOf(root, dir) {
  const path = join(root, dir);
  makeDir(path);
  return path;
}

/** The registries of upstream's RegistryList with the served ones moved under `address` (HOST:PORT). */
export function repoList(address) {
  return Object.fromEntries(Object.entries(UPSTREAM_REGISTRIES).map(([key, value]) => [key, SERVED.includes(key) ? `${address}/${value}` : value]));
}

/** Writes the KUBE_TEST_REPO_LIST file for a registry at `address`; returns its path. */
export function writeRepoList(outDir, address) {
  const file = join(outDir, 'repo-list.yaml');
  const lines = [
    `# KUBE_TEST_REPO_LIST for upstream's e2e suite: stand-ins served by ${address} (scripts/conformance-images.mjs);`,
    "# the registries not served there keep upstream's values.",
    ...Object.entries(repoList(address)).map(([key, value]) => `${key}: ${value}`),
    '',
  ];
  mkdirSync(outDir, { recursive: true });
  writeFileSync(file, lines.join('\n'));
  return file;
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      registry: { type: 'string', default: DEFAULT_REGISTRY },
      'build-only': { type: 'boolean', default: false },
      stop: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node scripts/conformance-images.mjs [--out DIR] [--registry HOST:PORT] [--build-only] [--stop]');
    return;
  }
  const out = resolve(values.out ?? DEFAULT_OUT);
  if (values.stop) {
    console.log((await stopRegistry({ out })) ? `stopped the registry started from ${out}` : `no registry started from ${out} is running`);
    return;
  }
  const push = !values['build-only'];
  const missing = missingConformancePrerequisites({ registry: push });
  if (missing.length > 0) throw new Error(`missing: ${missing.join('; ')}`);
  const match = /^(127\.\d+\.\d+\.\d+|localhost):(\d+)$/.exec(values.registry);
  if (!match) throw new Error(`--registry wants a loopback HOST:PORT such as ${DEFAULT_REGISTRY}, not ${values.registry}`);
  const build = await buildConformanceImages({ out, log: (line) => console.log(line) });
  for (const image of Object.values(build.images)) console.log(`${image.name}  ${image.manifestDigest}`);
  console.log(`${build.reused ? 'reused' : 'built'} in ${build.seconds.toFixed(1)}s (${build.architecture}), layouts and archives in ${out}`);
  const listFile = writeRepoList(out, values.registry);
  if (push) {
    const registry = await startRegistry({ out, host: match[1], port: Number(match[2]) });
    console.log(`registry: ${registry.url} (${registry.started ? `started, storage ${registry.storage}` : 'already running'})`);
    const started = performance.now();
    // Each goes to <HOST:PORT>/<its upstream repository>, where the repo list points.
    const pushed = await pushTestImages(build, values.registry);
    console.log(`pushed ${pushed.length} images in ${((performance.now() - started) / 1000).toFixed(1)}s`);
    if (registry.started) console.log(`stop it: node scripts/conformance-images.mjs --stop${values.out ? ` --out ${out}` : ''}`);
  }
  console.log(`export KUBE_TEST_REPO_LIST=${listFile}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`conformance-images: ${err.message}`);
    process.exit(1);
  });
}
