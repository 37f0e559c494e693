import { RESOURCES, type Deployment, type Event, type HorizontalPodAutoscaler, type HorizontalPodAutoscalerSpec, type Pod } from '@skiff/api';
import { trackWork } from '@skiff/controller-manager';
import { definePlugin, Kernel } from '@skiff/kernel';
import { startControlPlane, waitFor, type ControlPlane } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HpaController } from './controller.js';
import hpaPlugin, { HPA_CONTROLLER_NAME } from './index.js';
import type { PodMetricsSource, PodUsage } from './metrics-source.js';

// The controller against a real API server: real HorizontalPodAutoscalers, Deployments, their /scale, pods,
// status writes and events. The one stand-in is the pod usage: metrics.k8s.io is served by another plugin
// (@skiff/plugin-metrics-server, tested with this controller in integration-tests/hpa.test.ts), so here the
// controller reads a PodMetricsSource the test sets. The test also plays the kubelet: it creates the pods and
// reports them running and ready.

const ns = 'default';
const WAIT = { timeoutMs: 15_000 };
let plane: ControlPlane;

/** CPU usage in millicores by pod name; pods without an entry have no metrics. */
const cpuUsage = new Map<string, number>();
const selectorsAsked: string[] = [];
const fakeMetrics: PodMetricsSource = {
  async podMetrics(namespace, selector) {
    selectorsAsked.push(selector);
    const samples: PodUsage[] = [];
    for (const [pod, millis] of cpuUsage) {
      if (!pod.startsWith(`${namespace}/`)) continue;
      samples.push({ pod: pod.slice(namespace.length + 1), timestamp: Date.now(), windowMs: 1000, containers: [{ name: 'app', usage: { cpu: millis } }] });
    }
    return samples;
  },
};

/** The controller with the test's metrics and short periods; the plugin's own controller is disabled. */
const hpaWithTestMetrics = definePlugin({
  name: 'test-hpa-metrics',
  version: '0.1.0',
  kernel: '^0.1.0',
  apply(kernel) {
    kernel.hooks.controllers.tap('test-hpa-metrics', (registry) =>
      registry.register({
        name: 'hpa-with-test-metrics',
        start(ctx) {
          const controller = new HpaController(ctx, {
            syncPeriodMs: 300,
            tolerance: 0.1,
            downscaleStabilizationMs: 300_000,
            cpuInitializationPeriodMs: 0,
            initialReadinessDelayMs: 0,
            metrics: fakeMetrics,
          });
          trackWork(ctx, controller.run(2));
        },
      }),
    );
  },
});

beforeAll(async () => {
  plane = await startControlPlane([hpaPlugin, hpaWithTestMetrics], { config: { logLevel: 'silent' }, enabled: ['*', `-${HPA_CONTROLLER_NAME}`] });
});
afterAll(async () => {
  await plane?.stop();
});

async function createDeployment(name: string, replicas: number, cpuRequest: string | null = '100m'): Promise<Deployment> {
  return plane.client.create<Deployment>(RESOURCES.deployments, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'nginx', ...(cpuRequest ? { resources: { requests: { cpu: cpuRequest } } } : {}) }] },
      },
    },
  });
}

/** A running, ready pod of the deployment, as a kubelet would report it. */
async function runPod(deployment: Deployment, name: string, cpu: number): Promise<void> {
  const template = deployment.spec.template;
  const created = await plane.client.create<Pod>(RESOURCES.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: template.metadata?.labels },
    spec: template.spec!,
  });
  const since = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  await plane.client.updateStatus<Pod>(RESOURCES.pods, {
    ...created,
    status: { phase: 'Running', startTime: since, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: since }] },
  });
  cpuUsage.set(`${ns}/${name}`, cpu);
}

async function createHpa(name: string, target: string, spec: Partial<HorizontalPodAutoscalerSpec> = {}): Promise<HorizontalPodAutoscaler> {
  return plane.client.create<HorizontalPodAutoscaler>(RESOURCES.horizontalpodautoscalers, {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace: ns },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: target },
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
      ...spec,
    },
  });
}

const getHpa = (name: string) => plane.client.get<HorizontalPodAutoscaler>(RESOURCES.horizontalpodautoscalers, name, ns);
const replicasOf = async (name: string) => (await plane.client.get<Deployment>(RESOURCES.deployments, name, ns)).spec.replicas;
const conditionOf = (hpa: HorizontalPodAutoscaler, type: string) => hpa.status?.conditions?.find((condition) => condition.type === type);

async function eventsOf(hpa: HorizontalPodAutoscaler, reason: string): Promise<Event[]> {
  const events = await plane.client.list<Event>(RESOURCES.events, ns);
  return events.items.filter((event) => event.involvedObject.uid === hpa.metadata.uid && event.reason === reason);
}

describe('the HorizontalPodAutoscaler controller against a real API server', () => {
  it('scales a Deployment up through /scale when its pods use more CPU than the target, and back down when they use less', async () => {
    const deployment = await createDeployment('web', 2);
    await runPod(deployment, 'web-a', 100);
    await runPod(deployment, 'web-b', 100);
    const hpa = await createHpa('web', 'web', {
      behavior: { scaleDown: { stabilizationWindowSeconds: 1, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } },
    });

    // 200 % of the request against a 50 % target: 2 × 2 = 4, within the default scale-up policies (4 pods or 100 % per 15 s).
    await waitFor('the scale-up', async () => (await replicasOf('web')) === 4, WAIT);
    const scaledUp = await waitFor(
      'the status',
      async () => {
        const current = await getHpa('web');
        return current.status?.desiredReplicas === 4 && current.status.lastScaleTime && current;
      },
      WAIT,
    );
    expect(scaledUp.status?.currentMetrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 100, averageValue: '100m' } } },
    ]);
    expect(conditionOf(scaledUp, 'ScalingActive')).toMatchObject({
      status: 'True',
      reason: 'ValidMetricFound',
      message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
    });
    expect(conditionOf(scaledUp, 'ScalingLimited')).toMatchObject({ status: 'False', reason: 'DesiredWithinRange' });
    await waitFor(
      'the scale-up event',
      async () =>
        (await eventsOf(hpa, 'SuccessfulRescale')).some(
          (event) => event.message === 'New size: 4; reason: cpu resource utilization (percentage of request) above target',
        ),
      WAIT,
    );
    expect(selectorsAsked).toContain('app=web');
    const upEvent = (await eventsOf(hpa, 'SuccessfulRescale'))[0]!;
    expect(upEvent.source?.component ?? upEvent.reportingComponent).toBe('horizontal-pod-autoscaler');

    // Now idle: 10 % against 50 % → 1 replica, once the 1 s stabilization window has passed.
    cpuUsage.set(`${ns}/web-a`, 10);
    cpuUsage.set(`${ns}/web-b`, 10);
    await waitFor('the scale-down', async () => (await replicasOf('web')) === 1, WAIT);
    await waitFor(
      'the scale-down event',
      async () => (await eventsOf(hpa, 'SuccessfulRescale')).some((event) => event.message === 'New size: 1; reason: All metrics below target'),
      WAIT,
    );
    const settled = await waitFor(
      'the status after the scale-down',
      async () => {
        const current = await getHpa('web');
        return current.status?.currentReplicas === 1 && current;
      },
      WAIT,
    );
    expect(conditionOf(settled, 'AbleToScale')).toMatchObject({ status: 'True' });
  });

  it('holds a scale-down for the stabilization window', async () => {
    const deployment = await createDeployment('steady', 2);
    await runPod(deployment, 'steady-a', 50);
    await runPod(deployment, 'steady-b', 50);
    await createHpa('steady', 'steady', {
      behavior: { scaleDown: { stabilizationWindowSeconds: 3600, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } },
    });
    await waitFor('a first sync', async () => conditionOf(await getHpa('steady'), 'ScalingActive')?.status === 'True', WAIT);
    cpuUsage.set(`${ns}/steady-a`, 5);
    cpuUsage.set(`${ns}/steady-b`, 5);
    const held = await waitFor(
      'the stabilized recommendation',
      async () => {
        const current = await getHpa('steady');
        return conditionOf(current, 'AbleToScale')?.reason === 'ScaleDownStabilized' && current;
      },
      WAIT,
    );
    expect(conditionOf(held, 'AbleToScale')?.message).toBe('recent recommendations were higher than current one, applying the highest recent recommendation');
    expect(await replicasOf('steady')).toBe(2);
  });

  it('goes inactive when a pod has no CPU request', async () => {
    const deployment = await createDeployment('no-request', 1, null);
    await runPod(deployment, 'no-request-a', 100);
    const hpa = await createHpa('no-request', 'no-request');
    const inactive = await waitFor(
      'ScalingActive=False',
      async () => {
        const current = await getHpa('no-request');
        return conditionOf(current, 'ScalingActive')?.status === 'False' && current;
      },
      WAIT,
    );
    expect(conditionOf(inactive, 'ScalingActive')).toMatchObject({
      reason: 'FailedGetResourceMetric',
      message: 'the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu in container app of Pod no-request-a',
    });
    await waitFor('the Warning events', async () => (await eventsOf(hpa, 'FailedComputeMetricsReplicas')).length > 0, WAIT);
    expect(await replicasOf('no-request')).toBe(1);
  });

  it('leaves a target scaled to zero alone (ScalingDisabled)', async () => {
    await createDeployment('paused', 0);
    await createHpa('paused', 'paused');
    const disabled = await waitFor(
      'ScalingDisabled',
      async () => {
        const current = await getHpa('paused');
        return conditionOf(current, 'ScalingActive')?.reason === 'ScalingDisabled' && current;
      },
      WAIT,
    );
    expect(disabled.status).toMatchObject({ currentReplicas: 0, desiredReplicas: 0 });
    expect(await replicasOf('paused')).toBe(0);
  });

  it('brings a target below minReplicas up to it, without metrics', async () => {
    await createDeployment('small', 1);
    const hpa = await createHpa('small', 'small', { minReplicas: 3 });
    await waitFor('minReplicas', async () => (await replicasOf('small')) === 3, WAIT);
    await waitFor(
      'the rescale event',
      async () =>
        (await eventsOf(hpa, 'SuccessfulRescale')).some((event) => event.message === 'New size: 3; reason: Current number of replicas below Spec.MinReplicas'),
      WAIT,
    );
  });

  it('reports a target it cannot read (AbleToScale=False, FailedGetScale)', async () => {
    const hpa = await createHpa('orphan', 'not-there');
    const failed = await waitFor(
      'AbleToScale=False',
      async () => {
        const current = await getHpa('orphan');
        return conditionOf(current, 'AbleToScale')?.status === 'False' && current;
      },
      WAIT,
    );
    expect(conditionOf(failed, 'AbleToScale')?.reason).toBe('FailedGetScale');
    expect(conditionOf(failed, 'AbleToScale')?.message).toMatch(/^the HPA controller was unable to get the target's current scale: .*not-there/);
    await waitFor('the FailedGetScale event', async () => (await eventsOf(hpa, 'FailedGetScale')).length > 0, WAIT);
  });
});

describe('the plugin options', () => {
  it('stops the start on an option out of range, naming the plugin and the option', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(hpaPlugin, { tolerance: 2 })).toThrow(/@skiff\/plugin-controller-hpa[\s\S]*tolerance/);
  });

  it('takes the defaults', () => {
    expect(() => new Kernel({ config: { logLevel: 'silent' } }).use(hpaPlugin, { syncPeriodSeconds: 2 })).not.toThrow();
  });
});
