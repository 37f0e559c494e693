import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { errorMessage, errors, type Endpoints, type KubeObject, type Node, type Pod, type Service } from '@skiff/api';
import type { RestContext } from '../rest/context.js';
import { objectKey } from '../rest/keys.js';
import { kubeletEndpoint } from '../streaming/remote-node.js';
import type { KubeletClient } from '../streaming/remote-node-client.js';
import type { BackendTls } from './forward.js';

/** Where a proxy request goes: scheme, host and port of the backend; the path is the request's own. */
export interface ProxyTarget {
  scheme: 'http' | 'https';
  /** An address or host name, without brackets. */
  host: string;
  /** Empty for the scheme's default port. */
  port: string;
  /** How the backend is verified and what is presented to it; without it, an https backend is not verified. */
  tls?: BackendTls;
}

/** What nodes/proxy presents to kubelets and verifies them against: the API server's kubelet client. */
export type KubeletCredentials = Pick<KubeletClient, 'credentials'>;

/**
 * Splits a proxy request's `name`: `name`, `name:port` or `scheme:name:port` with scheme http or https;
 * undefined for anything else (as apimachinery's SplitSchemeNamePort).
 */
export function splitSchemeNamePort(id: string): { scheme: '' | 'http' | 'https'; name: string; port: string } | undefined {
  const parts = id.split(':');
  const [scheme, name, port] = parts.length === 1 ? ['', parts[0]!, ''] : parts.length === 2 ? ['', parts[0]!, parts[1]!] : parts.length === 3 ? parts : [];
  if (!name || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme: scheme as '' | 'http' | 'https', name, port: port ?? '' };
}

/**
 * Whether an address is one the API server may proxy to: Go's IsGlobalUnicast (not unspecified, loopback,
 * link-local, multicast or the IPv4 broadcast address). Private ranges are global unicast.
 */
export function isGlobalUnicast(address: string): boolean {
  const family = isIP(address);
  if (family === 4) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    if (address === '255.255.255.255' || a === 0 || a === 127 || a >= 224) return false;
    return !(a === 169 && b === 254);
  }
  if (family === 6) {
    const lower = address.toLowerCase();
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped) return isGlobalUnicast(mapped[1]!);
    if (lower === '::' || lower === '::1') return false;
    return !/^ff/.test(lower) && !/^fe[89ab]/.test(lower);
  }
  return false;
}

async function readStored<T extends KubeObject>(ctx: RestContext, resource: string, namespace: string, name: string): Promise<T> {
  const definition = ctx.core.registry.get('', resource);
  const stored = definition ? await ctx.core.store.get(objectKey(definition, namespace, name)) : undefined;
  if (!stored) throw errors.notFound(resource, '', name);
  return stored.object as T;
}

/** pods/<id>/proxy: the pod's first IP, at the port asked for or its first declared container port. */
export async function podTarget(ctx: RestContext): Promise<ProxyTarget> {
  const id = splitSchemeNamePort(ctx.info.name);
  if (!id) throw errors.badRequest(`invalid pod request ${JSON.stringify(ctx.info.name)}`);
  const pod = await readStored<Pod>(ctx, 'pods', ctx.info.namespace, id.name);
  let port = id.port;
  if (!port) {
    const declared = pod.spec?.containers?.find((container) => container.ports?.length)?.ports?.[0]?.containerPort;
    if (declared !== undefined) port = String(declared);
  }
  const podIP = pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP ?? '';
  if (!isGlobalUnicast(podIP)) throw errors.badRequest('address not allowed');
  return { scheme: id.scheme || 'http', host: podIP, port };
}

/**
 * services/<id>/proxy: an address of the Service's Endpoints that belongs to a pod of the namespace holding
 * that IP, at the endpoint port named like the Service port asked for (a port number is looked up among the
 * Service's ports first). Subsets and addresses are tried from a random start, as kube-apiserver does.
 */
export async function serviceTarget(ctx: RestContext): Promise<ProxyTarget> {
  const id = splitSchemeNamePort(ctx.info.name);
  if (!id) throw errors.badRequest(`invalid service request ${JSON.stringify(ctx.info.name)}`);
  const namespace = ctx.info.namespace;
  let portName = id.port;
  if (/^[+-]?\d+$/.test(portName)) {
    const number = Number(portName);
    const service = await readStored<Service>(ctx, 'services', namespace, id.name);
    const match = service.spec?.ports?.find((port) => port.port === number);
    if (!match) throw errors.unavailable(`no service port ${number} found for service ${JSON.stringify(id.name)}`);
    portName = match.name ?? '';
  }
  const endpoints = await readStored<Endpoints>(ctx, 'endpoints', namespace, id.name);
  const subsets = endpoints.subsets ?? [];
  if (subsets.length === 0) throw errors.unavailable(`no endpoints available for service ${JSON.stringify(id.name)}`);
  for (const subset of rotated(subsets)) {
    const port = subset.ports?.find((candidate) => (candidate.name ?? '') === portName);
    if (!port || !subset.addresses?.length) continue;
    for (const address of rotated(subset.addresses)) {
      const ref = address.targetRef;
      if (!ref?.name || ref.namespace !== namespace) continue;
      const pod = await readStored<Pod>(ctx, 'pods', namespace, ref.name).catch(() => undefined);
      if (!pod?.status?.podIPs?.some((podIP) => podIP.ip === address.ip)) continue;
      return { scheme: id.scheme || 'http', host: address.ip, port: String(port.port) };
    }
  }
  throw errors.unavailable(`no endpoints available for service ${JSON.stringify(ctx.info.name)}`);
}

/**
 * nodes/<id>/proxy: the node's kubelet where pods/log and exec reach it (its preferred address and reported
 * kubelet port), over HTTPS with the API server's kubelet client certificate, its serving certificate verified
 * against the cluster CA. Another port asked for is reached with the scheme asked for, unverified and without
 * the certificate, as kube-apiserver's proxy transport. The host must resolve to global unicast addresses only.
 */
export async function nodeTarget(ctx: RestContext, kubelets: KubeletCredentials): Promise<ProxyTarget> {
  const id = splitSchemeNamePort(ctx.info.name);
  if (!id) throw errors.badRequest(`invalid node request ${JSON.stringify(ctx.info.name)}`);
  const node = await readStored<Node>(ctx, 'nodes', '', id.name);
  const { host, port } = kubeletEndpoint(node);
  await assertProxyableHost(host);
  const kubeletPort = String(port);
  if (id.port && id.port !== kubeletPort) return { scheme: id.scheme || 'http', host, port: id.port };
  const { ca, cert, key } = kubelets.credentials();
  return { scheme: 'https', host, port: kubeletPort, tls: { ca, cert, key, insecure: false } };
}

async function assertProxyableHost(host: string): Promise<void> {
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch (err) {
    throw errors.badRequest(`lookup ${host}: ${errorMessage(err)}`);
  }
  if (addresses.length === 0) throw errors.badRequest('no addresses for hostname');
  if (!addresses.every(isGlobalUnicast)) throw errors.badRequest('address not allowed');
}

/** The items starting at a random one, wrapping around. */
function rotated<T>(items: readonly T[]): T[] {
  const start = Math.floor(Math.random() * items.length);
  return [...items.slice(start), ...items.slice(0, start)];
}
