import type { ServiceProxy, ServiceProxyContext } from '@skiff/kernel';
import { HostCommands } from './host.js';
import { PROXY_NAME } from './names.js';
import { Proxier, type ProxierSettings } from './proxier.js';

export interface SharedSettings extends ProxierSettings {
  /** Run the host commands in this named network namespace (tests and benchmarks). */
  netns?: string;
}

interface Running {
  proxier: Promise<Proxier>;
  handles: number;
}

/**
 * The running proxies of this process, one per table (and namespace): nodes sharing a host share its rules, so
 * the first node's create starts the proxy, the others join it, and the last one's close removes the table.
 */
const running = new Map<string, Running>();

async function startProxier(settings: SharedSettings, context: ServiceProxyContext): Promise<Proxier> {
  const commands = await HostCommands.create(settings.netns);
  const proxier = new Proxier(context.client, commands, settings, context.logger.child({ serviceProxy: PROXY_NAME, table: settings.table }));
  proxier.addNode(context.nodeName, context.nodeIPs);
  await proxier.start();
  return proxier;
}

export async function acquireServiceProxy(settings: SharedSettings, context: ServiceProxyContext): Promise<ServiceProxy> {
  const key = `${settings.netns ?? ''} ${settings.table}`;
  let entry = running.get(key);
  const first = !entry;
  if (!entry) {
    entry = { proxier: startProxier(settings, context), handles: 0 };
    running.set(key, entry);
  }
  const shared = entry;
  shared.handles++;
  let proxier: Proxier;
  try {
    proxier = await shared.proxier;
  } catch (err) {
    if (--shared.handles === 0 && running.get(key) === shared) running.delete(key);
    throw err;
  }
  if (!first) proxier.addNode(context.nodeName, context.nodeIPs);
  let closed = false;
  return {
    name: PROXY_NAME,
    synced: () => proxier.synced(),
    async close() {
      if (closed) return;
      closed = true;
      if (--shared.handles > 0) return proxier.removeNode(context.nodeName);
      if (running.get(key) === shared) running.delete(key);
      await proxier.stop();
    },
  };
}
