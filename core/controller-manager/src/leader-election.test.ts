import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES, type ConfigMap, type Lease } from '@skiff/api';
import apiServer from '@skiff/apiserver';
import { createLoopbackClient } from '@skiff/client';
import { definePlugin, Kernel, waitFor } from '@skiff/kernel';
import alwaysAllow from '@skiff/plugin-authz-always-allow';
import store from '@skiff/store';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import controllerManager from './plugin.js';
import { startApiServer, type TestApiServer } from './test-support/api-server.js';
import { FreezableRelay } from './test-support/relay.js';

// Seconds, as in the options: short, with room for a busy machine.
const LEADER_ELECTION = { leaderElect: true, leaseDuration: 2, renewDeadline: 1.2, retryPeriod: 0.3 };
const STAMP = 'test.skiff.dev/stamped-by';

/** Which managers run their controllers right now, and whether two ever did at once. */
class Terms {
  readonly running = new Set<string>();
  overlaps = 0;
  readonly started: string[] = [];
}

/**
 * A real controller: every ConfigMap it sees without a stamp gets one naming the manager that runs it. Registered
 * fresh by every manager, so a stamp says which manager's controllers did the work.
 */
function stampController(manager: string, terms: Terms) {
  return definePlugin({
    name: `test-stamp-${manager}`,
    version: '0.1.0',
    kernel: '^0.1.0',
    apply(kernel) {
      kernel.hooks.controllers.tap(`test-stamp-${manager}`, (registry) => {
        registry.register({
          name: 'stamp',
          start(ctx) {
            if (terms.running.size > 0) terms.overlaps++;
            terms.running.add(manager);
            terms.started.push(manager);
            ctx.signal.addEventListener('abort', () => terms.running.delete(manager), { once: true });
            ctx.informers.informer<ConfigMap>(RESOURCES.configmaps, { namespace: 'default' }).addHandlers({
              add: (cm) => {
                if (ctx.signal.aborted || cm.metadata.annotations?.[STAMP]) return;
                ctx.client
                  .patch(RESOURCES.configmaps, cm.metadata.name!, { metadata: { annotations: { [STAMP]: manager } } }, { namespace: 'default' })
                  .catch((err: unknown) => ctx.logger.warn({ err }, 'stamp failed'));
              },
            });
          },
        });
      });
    },
  });
}

let api: TestApiServer;
const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  api = await startApiServer();
});
afterAll(async () => {
  await api?.stop();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A controller manager in a kernel of its own, reaching the API server through `server` (default: directly). */
async function remoteManager(name: string, terms: Terms, options: Record<string, unknown> = {}, server?: string): Promise<Kernel> {
  const dir = mkdtempSync(join(tmpdir(), `skiff-cm-${name}-`));
  api.writeAdminKubeconfig(join(dir, 'admin.kubeconfig'), server);
  const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, logLevel: process.env.SKIFF_TEST_LOG ?? 'error' } });
  kernel.use(controllerManager, { kubeconfig: 'admin.kubeconfig', resyncMs: 0, ...options }).use(stampController(name, terms));
  await kernel.start();
  cleanups.push(async () => {
    await kernel.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return kernel;
}

async function stampOf(name: string): Promise<string> {
  await api.client.create<ConfigMap>(RESOURCES.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
  return waitFor(`ConfigMap ${name} to be stamped`, async () => {
    const cm = await api.client.get<ConfigMap>(RESOURCES.configmaps, name, 'default');
    return cm.metadata.annotations?.[STAMP];
  });
}

function lease(resourceName = 'kube-controller-manager'): Promise<Lease> {
  return api.client.get<Lease>(RESOURCES.leases, resourceName, 'kube-system');
}

describe('the controller manager with leader election', () => {
  it('runs the controllers of one manager only, hands over when the leader stops renewing, and restarts them when it leads again', async () => {
    const terms = new Terms();
    const relay = await new FreezableRelay(new URL(api.url)).start();
    cleanups.push(() => relay.close());
    const leaseName = 'cm-handover';
    const leaderElection = { ...LEADER_ELECTION, resourceName: leaseName };
    await remoteManager('a', terms, { leaderElection }, relay.url);
    await waitFor('a to lead', () => terms.running.has('a'));
    await remoteManager('b', terms, { leaderElection });
    expect(await stampOf('first')).toBe('a');
    expect([...terms.running]).toEqual(['a']);
    expect((await lease(leaseName)).spec?.holderIdentity).toMatch(/_/);

    // a's API server stops answering: a stops its controllers at the renew deadline, b starts its own after the lease ran out.
    relay.frozen = true;
    await waitFor('a to stop its controllers', () => !terms.running.has('a'), { timeoutMs: 10_000 });
    await waitFor('b to lead', () => terms.running.has('b'), { timeoutMs: 10_000 });
    expect(await stampOf('second')).toBe('b');

    // a reaches the API server again and waits as a candidate; once b stops (releasing the lease) a starts afresh.
    relay.thaw();
    const kernelB = cleanups.pop()!;
    await kernelB();
    await waitFor('a to lead again', () => terms.running.has('a'), { timeoutMs: 10_000 });
    expect(await stampOf('third')).toBe('a');
    expect(terms.started).toEqual(['a', 'b', 'a']);
    expect(terms.overlaps).toBe(0);
    expect((await lease(leaseName)).spec?.leaseTransitions).toBe(2);
  });

  it('starts the controllers at once without leader election, and only while leading with it', async () => {
    const terms = new Terms();
    await remoteManager('plain', terms);
    expect([...terms.running]).toEqual(['plain']);
    const elected = new Terms();
    await remoteManager('elected', elected, { leaderElection: { ...LEADER_ELECTION } });
    await waitFor('the elected manager to lead', () => elected.running.has('elected'));
    expect((await lease()).spec).toMatchObject({ leaseDurationSeconds: 2, leaseTransitions: 0 });
    // Stopping releases the lease: nobody holds it afterwards.
    await cleanups.pop()!();
    expect(elected.running.size).toBe(0);
    expect((await lease()).spec?.holderIdentity).toBe('');
  });

  it('elects through the in-process API server too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-cm-local-'));
    const terms = new Terms();
    const kernel = new Kernel({ config: { dataDir: dir, rootDir: dir, port: 0, logLevel: process.env.SKIFF_TEST_LOG ?? 'error' } });
    kernel
      .use(store)
      .use(apiServer, { port: 0 })
      .use(alwaysAllow)
      .use(controllerManager, { leaderElection: LEADER_ELECTION })
      .use(stampController('local', terms));
    await kernel.start();
    try {
      await waitFor('the local manager to lead', () => terms.running.has('local'));
      const admin = createLoopbackClient(kernel.resolve('apiHandler'), { username: 'test-admin', groups: ['system:masters'] });
      const held = await admin.get<Lease>(RESOURCES.leases, 'kube-controller-manager', 'kube-system');
      expect(held.spec?.holderIdentity).toMatch(/^.+_[0-9a-f-]{36}$/);
    } finally {
      await kernel.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(terms.running.size).toBe(0);
  });

  it('says what is wrong with its connection and election options', async () => {
    const quiet = () => new Kernel({ config: { logLevel: 'silent' } });
    expect(() => quiet().use(controllerManager, { servers: ['https://10.0.0.1:6443'] })).toThrow(
      'option "servers" needs "kubeconfig" (the servers share its CA and credentials)',
    );
    expect(() => quiet().use(controllerManager, { leaderElection: { leaderElect: true, leaseDuration: 10, renewDeadline: 10 } })).toThrow(
      'leaderElection needs leaseDuration > renewDeadline > 1.2 × retryPeriod > 0 seconds (got 10, 10, 2)',
    );
    await expect(quiet().use(controllerManager).start()).rejects.toThrow(
      'plugin "@skiff/controller-manager" needs component "apiHandler", which no loaded plugin provides',
    );
  });
});
