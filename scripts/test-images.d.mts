export interface TestImageName {
  /** The name in the OCI archives and after `ctr images import`, e.g. skiff.local/busybox:1. */
  name: string;
  /** The repository in a registry, e.g. skiff/busybox. */
  repository: string;
  tag: string;
}
export interface TestImage extends TestImageName {
  /** The OCI image layout directory. */
  layout: string;
  /** The OCI archive (a tar of the layout). */
  archive: string;
  manifestDigest: string;
  configDigest: string;
  layerDigests: string[];
}
export interface TestImages {
  out: string;
  /** amd64, arm64, … */
  architecture: string;
  /** True when an earlier build with the same busybox and recipe was reused. */
  reused: boolean;
  seconds: number;
  images: { busybox: TestImage; pause: TestImage; curl: TestImage };
}
export interface TestRegistry {
  /** http://HOST:PORT */
  url: string;
  /** HOST:PORT, as image references name it. */
  address: string;
  /** False when a registry already answered there. */
  started: boolean;
  storage: string;
  /** Stops the registry if it was started from `out`; false when there was none to stop. */
  stop(): Promise<boolean>;
}
export const DEFAULT_OUT: string;
export const INDEX_HTML: string;
export const IMAGES: { readonly busybox: TestImageName; readonly pause: TestImageName; readonly curl: TestImageName };
export function ociArchitecture(nodeArch?: string): string;
/** One line per missing tool, naming its Debian package; empty when all are there. */
export function missingPrerequisites(options?: { registry?: boolean }): string[];
export function buildTestImages(options?: { out?: string; busybox?: string }): Promise<TestImages>;
/** Basic auth for a registry: an htpasswd file of bcrypt (`$2y$` / `$2b$`) entries. */
export interface RegistryAuth {
  htpasswd: string;
}
export function startRegistry(options?: { out?: string; port?: number; host?: string; auth?: RegistryAuth }): Promise<TestRegistry>;
export function stopRegistry(options?: { out?: string }): Promise<boolean>;
/** Pushes every image to the registry at `address` (HOST:PORT), logging in with `auth` when given; returns their references and manifest digests. */
export function pushTestImages(
  build: { images: Record<string, TestImage> },
  address: string,
  options?: { auth?: { username: string; password: string } },
): Promise<{ reference: string; manifestDigest: string }[]>;

/** Runs a program; resolves with its stdout, rejects with its exit code, stderr and stdout. */
export function runOrThrow(command: string, args: string[], options?: import('node:child_process').ExecFileOptions): Promise<string>;
export function onPath(command: string): boolean;
/** Debian's busybox-static binary, if installed. */
export function findBusybox(): string | undefined;
/** True when the ELF file asks for a program interpreter (ld.so). */
export function isDynamicElf(bytes: Buffer): boolean;
export function busyboxApplets(busybox: string): Promise<string[]>;
export function makeDir(path: string, mode?: number): void;
export function writeFileMode(path: string, content: string | Uint8Array, mode?: number): void;
/** The busybox image's tree under `root`: /bin/busybox and an applet link each, /etc/passwd, /etc/group, /root, /tmp, /www. */
export function busyboxTree(root: string, busyboxBytes: Buffer, applets: string[]): void;
/** /pause under `root`. */
export function pauseTree(root: string): void;
/** Host programs and every shared library they load (programs first), for a layer that runs them. */
export function hostProgramFiles(programs: string[]): Promise<{ path: string; bytes: Buffer }[]>;
export interface ImageLayer {
  bytes: Buffer;
  descriptor: { mediaType: string; digest: string; size: number };
}
/** Fills `<workDir>/<name>` with `fillTree` and tars it reproducibly into an uncompressed layer. */
export function buildLayer(workDir: string, name: string, fillTree: (root: string) => void): Promise<ImageLayer>;
/** Writes one image as an OCI layout and an OCI archive of it; `config` replaces or adds to the config's defaults. */
export function writeImage(options: {
  layoutDir: string;
  archive: string;
  image: TestImageName;
  architecture: string;
  layers: ImageLayer[];
  entrypoint?: string[];
  cmd?: string[];
  createdBy: string[];
  config?: Record<string, unknown>;
}): Promise<TestImage>;
