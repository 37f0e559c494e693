import type { ControlPlanePlugin } from '@skiff/testing';
import criSimulated, { type SimulatedRuntimeOptions } from '@skiff/plugin-cri-simulated';
import networkIpam from '@skiff/plugin-network-ipam';
import leastAllocated from '@skiff/plugin-scheduler-least-allocated';
import resourcesFit from '@skiff/plugin-scheduler-resources-fit';
import volumesBuiltin from '@skiff/plugin-volumes-builtin';
import scheduler from '@skiff/scheduler';
import kubelet from '../index.js';

/**
 * What a control plane needs on top to run pods, for startControlPlane: the scheduler with
 * resources-fit and least-allocated, kubelets (1 s heartbeats, then `kubeletOptions`), the simulated
 * runtime, IPAM and the built-in volume types.
 */
export function nodePlugins(runtime: Partial<SimulatedRuntimeOptions> = {}, kubeletOptions: Record<string, unknown> = {}): ControlPlanePlugin[] {
  return [scheduler, resourcesFit, leastAllocated, [kubelet, { heartbeatSeconds: 1, ...kubeletOptions }], [criSimulated, runtime], networkIpam, volumesBuiltin];
}
