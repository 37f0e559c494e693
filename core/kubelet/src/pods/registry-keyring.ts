import { errorMessage, type Secret } from '@skiff/api';
import type { ImageAuth } from '@skiff/kernel';

export const DOCKER_CONFIG_JSON = { type: 'kubernetes.io/dockerconfigjson', key: '.dockerconfigjson' } as const;
export const DOCKER_CFG = { type: 'kubernetes.io/dockercfg', key: '.dockercfg' } as const;

/** Docker Hub as the keyring names it: credentials for `index.docker.io` (or `https://index.docker.io/v1/`). */
const DOCKER_HUB_KEY = 'index.docker.io';

/**
 * A pull secret the kubelet cannot read: its JSON is broken or an `auth` field is not base64 of
 * `user:password`. The pull fails with this message (ErrImagePull), as in Kubernetes.
 */
export class PullSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PullSecretError';
  }
}

/**
 * The repository an image is pulled from, normalised as Docker names it: `nginx:1.27` →
 * `docker.io/library/nginx`, `me/app` → `docker.io/me/app`, `127.0.0.1:5000/team/app:1` →
 * `127.0.0.1:5000/team/app`; tag and digest dropped.
 */
export function imageRepository(image: string): string {
  let name = image.split('@')[0]!;
  const tagAt = name.lastIndexOf(':');
  if (tagAt > name.lastIndexOf('/')) name = name.slice(0, tagAt);
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const hasDomain = first !== '' && (/[.:]/.test(first) || first === 'localhost' || first !== first.toLowerCase());
  if (!hasDomain) return name.includes('/') ? `docker.io/${name}` : `docker.io/library/${name}`;
  if (first === 'index.docker.io') name = `docker.io${name.slice(slash)}`;
  if (name.startsWith('docker.io/') && !name.slice('docker.io/'.length).includes('/')) return `docker.io/library/${name.slice('docker.io/'.length)}`;
  return name;
}

interface Location {
  /** `host[:port]` as written. */
  authority: string;
  /** Host name parts (`registry.example.com` → registry, example, com); a credential's may hold globs. */
  hostParts: string[];
  port: string;
  path: string;
}

/** A schemeless `host[:port][/path]` split up as Go's url.Parse and net.SplitHostPort would; undefined when it is no URL. */
function parseLocation(location: string): Location | undefined {
  const withoutQuery = location.replace(/[?#].*$/s, '');
  const slash = withoutQuery.indexOf('/');
  const authority = slash < 0 ? withoutQuery : withoutQuery.slice(0, slash);
  const path = slash < 0 ? '' : withoutQuery.slice(slash);
  if (authority.includes('@') || /\s/.test(authority)) return undefined;
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(authority);
  if (bracketed) return { authority, hostParts: [bracketed[1]!], port: bracketed[2] ?? '', path };
  if (authority.startsWith('[')) return undefined;
  const colon = authority.lastIndexOf(':');
  const host = colon < 0 ? authority : authority.slice(0, colon);
  const port = colon < 0 ? '' : authority.slice(colon + 1);
  if (!/^\d*$/.test(port) || host.includes(':')) return undefined;
  return { authority, hostParts: host.split('.'), port, path };
}

/**
 * A host name part against a credential's glob (`*`, `[a-z]`, `[^…]`, `\` escapes), as Go's filepath.Match; a
 * broken glob matches nothing. (A `?` never gets here: as in upstream's URL parsing, it starts a query.)
 */
function globMatches(glob: string, part: string): boolean {
  let pattern = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '*') pattern += '.*';
    else if (char === '\\') {
      if (++i >= glob.length) return false;
      pattern += escapeRegExp(glob[i]!);
    } else if (char === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end <= i + 1) return false;
      const body = glob.slice(i + 1, end);
      const negated = body.startsWith('^');
      pattern += `[${negated ? '^' : ''}${(negated ? body.slice(1) : body).replace(/[\\^]/g, '\\$&')}]`;
      i = end;
    } else pattern += escapeRegExp(char);
  }
  try {
    return new RegExp(`^${pattern}$`, 's').test(part);
  } catch {
    return false;
  }
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/**
 * Whether a credential's key (`host[:port][/path]`, globs allowed in the host) covers a repository: the same
 * port, as many host parts each matching its glob, and the key's path a prefix of the repository's.
 */
export function keyMatches(key: string, repository: string): boolean {
  const credential = parseLocation(key);
  const target = parseLocation(repository);
  if (!credential || !target) return false;
  if (credential.port !== target.port || credential.hostParts.length !== target.hostParts.length) return false;
  if (!target.path.startsWith(credential.path)) return false;
  return credential.hostParts.every((glob, i) => globMatches(glob, target.hostParts[i]!));
}

/**
 * The keyring's index key for a docker config location: the scheme dropped, `/v1/` and `/v2/` meaning the
 * registry itself (`https://index.docker.io/v1/` → `index.docker.io`), any other path kept as a prefix.
 */
export function locationKey(location: string): string | undefined {
  const parsed = parseLocation(location.replace(/^https?:\/\//, ''));
  if (!parsed) return undefined;
  const path = /^\/v[12]\//.test(parsed.path) ? parsed.path.slice(3) : parsed.path;
  return path === '' || path === '/' ? parsed.authority : `${parsed.authority}${path}`;
}

/** Docker Hub images: no registry host in the name (`nginx`, `me/app`), or `docker.io` / `index.docker.io`. */
function isDockerHubImage(repository: string): boolean {
  const [first, ...rest] = repository.split('/');
  if (!first) return false;
  if (rest.length === 0 || first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/**
 * Registry credentials by where they apply, as the kubelet's docker keyring keeps them: a lookup returns
 * every credential whose key covers the image, most specific key first (keys in reverse order), then in
 * the order they were added; Docker Hub images fall back to the `index.docker.io` credentials.
 */
export class RegistryKeyring {
  private readonly credentials = new Map<string, ImageAuth[]>();

  /** Adds the credentials of one docker config (`auths` of a config.json, or a whole .dockercfg); unparseable locations are skipped. */
  add(entries: ReadonlyMap<string, ImageAuth>): void {
    for (const [location, auth] of entries) {
      const key = locationKey(location);
      if (key === undefined) continue;
      this.credentials.set(key, [...(this.credentials.get(key) ?? []), auth]);
    }
  }

  /** The credentials to try for an image, in order; empty when none apply (pull without credentials). */
  lookup(image: string): ImageAuth[] {
    const repository = imageRepository(image);
    const keys = [...this.credentials.keys()].sort().reverse();
    const found = keys.filter((key) => keyMatches(key, repository)).flatMap((key) => this.credentials.get(key)!);
    if (found.length > 0 || !isDockerHubImage(repository)) return found;
    return this.credentials.get(DOCKER_HUB_KEY) ?? [];
  }
}

const STRICT_BASE64 = /^[A-Za-z0-9+/]*$/;

/** Go's base64 decoding as the keyring does it: padded (StdEncoding) when the text ends in `=`, else unpadded; anything else is an error. */
function decodeBase64Strictly(text: string): string | undefined {
  const compact = text.replace(/[\r\n]/g, '');
  const padded = text.trim().endsWith('=');
  const body = padded ? compact.replace(/={1,2}$/, '') : compact;
  if (!STRICT_BASE64.test(body)) return undefined;
  if (padded ? compact.length % 4 !== 0 : body.length % 4 === 1) return undefined;
  return Buffer.from(body, 'base64').toString('utf8');
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One docker config entry's login: `auth` (base64 `user:password`) wins over `username` / `password`. */
function entryAuth(entry: unknown, where: string): ImageAuth {
  if (entry === null) return { username: '', password: '' };
  if (!isObject(entry)) throw new PullSecretError(`${where} is not an object`);
  const field = (name: string): string => {
    const value = entry[name];
    if (value === undefined || value === null) return '';
    if (typeof value !== 'string') throw new PullSecretError(`${where}.${name} is not a string`);
    return value;
  };
  const auth = field('auth');
  if (auth === '') return { username: field('username'), password: field('password') };
  const decoded = decodeBase64Strictly(auth);
  if (decoded === undefined) throw new PullSecretError(`${where}.auth is not valid base64`);
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new PullSecretError(`${where}.auth must be formatted as base64(username:password)`);
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function dockerConfigEntries(text: string, json: boolean, where: string): Map<string, ImageAuth> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PullSecretError(`${where} is not valid JSON: ${errorMessage(err)}`);
  }
  let auths = parsed;
  if (json && parsed !== null) {
    if (!isObject(parsed)) throw new PullSecretError(`${where} is not a JSON object`);
    auths = parsed.auths;
  }
  if (auths === undefined || auths === null) return new Map();
  if (!isObject(auths)) throw new PullSecretError(`${where}${json ? ' auths' : ''} is not an object of registries`);
  return new Map(Object.entries(auths).map(([location, entry]) => [location, entryAuth(entry, `${where} "${location}"`)]));
}

/**
 * The keyring of a pod's pull secrets: `kubernetes.io/dockerconfigjson` secrets by their `.dockerconfigjson`
 * (its `auths`), `kubernetes.io/dockercfg` secrets by their `.dockercfg`; other secrets, and ones with that
 * key empty, add nothing. A secret whose config cannot be read throws a PullSecretError naming it.
 */
export function keyringFromPullSecrets(secrets: readonly Secret[]): RegistryKeyring {
  const keyring = new RegistryKeyring();
  for (const secret of secrets) {
    const format = [DOCKER_CONFIG_JSON, DOCKER_CFG].find((candidate) => secret.type === candidate.type && secret.data?.[candidate.key]);
    if (!format) continue;
    const where = `pull secret "${secret.metadata.namespace}/${secret.metadata.name}" ${format.key}`;
    const text = Buffer.from(secret.data![format.key]!, 'base64').toString('utf8');
    keyring.add(dockerConfigEntries(text, format === DOCKER_CONFIG_JSON, where));
  }
  return keyring;
}
