import { errors } from '@skiff/api';
import type { ApiResponse } from '@skiff/kernel';
import { admitConnect } from '../pipeline/admission.js';
import { authorize, authzAttributes } from '../pipeline/authorize.js';
import type { RestContext } from '../rest/context.js';
import { isUpgradeRequest } from './headers.js';
import { SPDY_UPGRADE } from './backend.js';
import { spdyPassThrough } from './pass-through.js';
import { chooseContainer, nodeConnectionOf, nodeFailure, podRef, readPod, type NodeConnectionLookup } from './pod-target.js';
import { portForwardTunnel, tunneledProtocols } from './portforward-tunnel.js';
import { streamTlsOf } from './remote-node.js';
import { optionBool, optionList } from './query-options.js';
import { chooseRemoteCommandProtocol, REMOTECOMMAND_PROTOCOLS, remoteCommandBridge, type RemoteCommandStreams } from './remotecommand.js';
import { handshakeProblem, isWebSocketRequest, offeredProtocols } from './websocket.js';

export type PodStreamKind = 'exec' | 'attach' | 'portforward';

type Upgrade = NonNullable<ApiResponse['upgrade']>;

/**
 * pods/exec, pods/attach and pods/portforward: checked like kube-apiserver checks them, then the connection
 * is taken over and joined to the container runtime's streaming server through the pod's node connection.
 * SPDY clients are passed through; WebSocket clients are translated (exec, attach) or tunnelled (port-forward).
 */
export async function podStream(ctx: RestContext, kind: PodStreamKind, nodes: NodeConnectionLookup): Promise<ApiResponse> {
  const { request } = ctx;
  if (!isUpgradeRequest(request.headers)) throw errors.badRequest('Upgrade request required');
  // A WebSocket handshake is a GET (authorized as get); kube-apiserver (AuthorizePodWebsocketUpgradeCreatePermission,
  // on by default) also asks for create, the verb of the SPDY POST, so both transports need the same permission.
  if (ctx.info.verb !== 'create') await authorize(ctx.core.hooks, { ...{}, ...authzAttributes(ctx.user, ctx.info), verb: 'create' });
  const websocket = isWebSocketRequest(request.headers);
  if (!websocket && request.headers.upgrade?.trim().toLowerCase() !== SPDY_UPGRADE.toLowerCase()) {
    throw errors.badRequest(`unable to upgrade: unsupported protocol ${JSON.stringify(request.headers.upgrade)} (expected websocket or ${SPDY_UPGRADE})`);
  }
  if (websocket) {
    const problem = handshakeProblem(request.headers);
    if (problem) throw errors.badRequest(`unable to upgrade: ${problem}`);
  }
  return kind === 'portforward' ? portForward(ctx, nodes, websocket) : remoteCommand(ctx, kind, nodes, websocket);
}

async function remoteCommand(ctx: RestContext, kind: 'exec' | 'attach', nodes: NodeConnectionLookup, websocket: boolean): Promise<ApiResponse> {
  const { query, queryAll, headers } = ctx.request;
  const tty = optionBool(query.tty);
  // As the kubelet does: a terminal has no separate stderr.
  const streams: RemoteCommandStreams = { stdin: optionBool(query.stdin), stdout: optionBool(query.stdout), stderr: optionBool(query.stderr) && !tty, tty };
  const command = optionList(queryAll, query, 'command');
  const protocol = websocket ? chooseRemoteCommandProtocol(offeredProtocols(headers)) : undefined;
  if (websocket && !protocol)
    throw noSubprotocol(
      offeredProtocols(headers),
      REMOTECOMMAND_PROTOCOLS.map((p) => p.name),
    );
  await admitConnect(ctx, {
    kind: kind === 'exec' ? 'PodExecOptions' : 'PodAttachOptions',
    ...Object.fromEntries(Object.entries(streams).filter(([, on]) => on)),
    ...(query.container ? { container: query.container } : {}),
    ...(kind === 'exec' ? { command } : {}),
  });
  const pod = await readPod(ctx);
  const container = chooseContainer(pod, query.container);
  if (!streams.stdin && !streams.stdout && !streams.stderr) throw errors.badRequest('you must specify at least 1 of stdin, stdout, stderr');
  if (kind === 'exec' && command.length === 0) throw errors.badRequest('you must specify at least one command for the container');
  const connection = await nodeConnectionOf(ctx, pod, nodes);
  let url: string;
  try {
    url = await connection.streamURL(kind, podRef(pod), container, { ...{}, ...(kind === 'exec' ? { cmd: command } : {}), ...streams });
  } catch (err) {
    throw nodeFailure(err);
  }
  const target = { url, tls: streamTlsOf(connection) };
  const upgrade: Upgrade = protocol
    ? remoteCommandBridge(target, headers['sec-websocket-key']!, protocol, streams, ctx.core.logger)
    : spdyPassThrough(target, headers);
  return { status: 101, upgrade };
}

async function portForward(ctx: RestContext, nodes: NodeConnectionLookup, websocket: boolean): Promise<ApiResponse> {
  const { query, queryAll, headers } = ctx.request;
  const ports = parsePorts(optionList(queryAll, query, 'ports'));
  const protocols = websocket ? tunneledProtocols(offeredProtocols(headers)) : [];
  if (websocket && protocols.length === 0) throw errors.badRequest('unable to upgrade: no tunneling spdy protocols provided');
  await admitConnect(ctx, { kind: 'PodPortForwardOptions', ...(ports.length ? { ports } : {}) });
  const pod = await readPod(ctx);
  const connection = await nodeConnectionOf(ctx, pod, nodes);
  let url: string;
  try {
    url = await connection.portForwardURL(podRef(pod), ports);
  } catch (err) {
    throw nodeFailure(err);
  }
  const target = { url, tls: streamTlsOf(connection) };
  const upgrade: Upgrade = websocket ? portForwardTunnel(target, headers['sec-websocket-key']!, protocols) : spdyPassThrough(target, headers);
  return { status: 101, upgrade };
}

/** `ports=8080&ports=9090` or `ports=8080,9090`: each a port number. */
export function parsePorts(values: string[]): number[] {
  const ports: number[] = [];
  for (const value of values.flatMap((entry) => entry.split(','))) {
    const text = value.trim();
    if (!text) continue;
    const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!(port >= 1 && port <= 65535)) throw errors.badRequest(`invalid port ${JSON.stringify(text)}: a port must be a number between 1 and 65535`);
    ports.push(port);
  }
  return ports;
}

function noSubprotocol(offered: string[], supported: string[]) {
  return errors.badRequest(
    `unable to upgrade: no supported websocket subprotocol: the client offered [${offered.join(' ')}], the server supports [${supported.join(' ')}]`,
  );
}
