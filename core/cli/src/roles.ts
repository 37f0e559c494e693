import { LIFECYCLE_STAGE, type ComponentName, type Hooks, type Kernel, type SkiffPlugin } from '@skiff/kernel';

/** The processes a control plane splits into; `skiff up` runs them all in one. */
export type Component = 'apiserver' | 'controller-manager' | 'scheduler' | 'kubelet';

/** The component that calls each hook; undefined for the kernel's own (their taps say nothing of a role). */
const HOOK_OWNERS: Readonly<Record<keyof Hooks, Component | undefined>> = Object.freeze({
  configure: undefined,
  components: undefined,
  start: undefined,
  ready: undefined,
  stop: undefined,
  resources: 'apiserver',
  authenticate: 'apiserver',
  flowControl: 'apiserver',
  authorize: 'apiserver',
  authorizationRules: 'apiserver',
  mutate: 'apiserver',
  validate: 'apiserver',
  initializers: 'apiserver',
  audit: 'apiserver',
  controllers: 'controller-manager',
  schedulerPlugins: 'scheduler',
  runtimes: 'kubelet',
  networks: 'kubelet',
  serviceProxies: 'kubelet',
  volumes: 'kubelet',
  podAdmit: 'kubelet',
  podSync: 'kubelet',
});

/** Shared components that exist only in the API server's process: a plugin that needs or provides one runs there. */
const API_SERVER_COMPONENTS: ReadonlySet<ComponentName> = new Set<ComponentName>([
  'store',
  'storageSealer',
  'apiHandler',
  'resourceRegistry',
  'initializerRegistry',
  'apiExtensions',
  'apiServerInfo',
  'kubernetesServiceIPs',
]);

/** The components themselves: they tap only lifecycle hooks, and the component plugins may still name apiHandler in `needs`. */
const COMPONENT_PACKAGES: Readonly<Record<string, Component>> = Object.freeze({
  '@skiff/store': 'apiserver',
  '@skiff/apiserver': 'apiserver',
  '@skiff/controller-manager': 'controller-manager',
  '@skiff/scheduler': 'scheduler',
  '@skiff/kubelet': 'kubelet',
});

/** Which component a lifecycle stage belongs to: each component's stage up to the next one's. */
function componentOfStage(stage: number): Component {
  if (stage < LIFECYCLE_STAGE.CONTROLLER_MANAGER) return 'apiserver';
  if (stage < LIFECYCLE_STAGE.SCHEDULER) return 'controller-manager';
  if (stage < LIFECYCLE_STAGE.KUBELET) return 'scheduler';
  return 'kubelet';
}

function tappedBy(tapName: string, plugin: string): boolean {
  return tapName === plugin || tapName.startsWith(`${plugin}/`);
}

/**
 * The components each plugin of `kernel` belongs with, read from what its `apply` did — no metadata of its own:
 * the hooks it tapped (each hook has one owner, see HOOK_OWNERS), the stage of its `start` lifecycle taps, and the
 * shared components it needs or provides. A plugin that touches the API server (taps a request-path hook, needs
 * `apiHandler`…) runs with the API server alone, since that process is the only one that can serve it; one that
 * taps hooks of several other components runs in each of them; one that taps only the kernel's `configure` /
 * `components` has an empty set and runs everywhere.
 */
export function pluginComponents(kernel: Kernel): Map<string, ReadonlySet<Component>> {
  const found = new Map<string, Set<Component>>();
  for (const { plugin } of kernel.listPlugins()) found.set(plugin.name, new Set(componentsDeclared(plugin)));
  for (const [hook, owner] of Object.entries(HOOK_OWNERS) as [keyof Hooks, Component | undefined][]) {
    if (!owner && hook !== 'start') continue;
    for (const tap of kernel.hooks[hook].taps) {
      for (const [plugin, components] of found) {
        if (tappedBy(tap.name, plugin)) components.add(owner ?? componentOfStage(tap.stage ?? 0));
      }
    }
  }
  const result = new Map<string, ReadonlySet<Component>>();
  for (const [plugin, components] of found) {
    const own = COMPONENT_PACKAGES[plugin];
    result.set(plugin, own ? new Set([own]) : components.has('apiserver') ? new Set(['apiserver']) : components);
  }
  return result;
}

function componentsDeclared(plugin: SkiffPlugin<any>): Component[] {
  const declared = [...(plugin.needs ?? []), ...(plugin.provides ?? [])];
  return declared.some((name) => API_SERVER_COMPONENTS.has(name)) ? ['apiserver'] : [];
}

/** Whether a plugin with these components runs in `component`'s process. */
export function runsIn(components: ReadonlySet<Component>, component: Component): boolean {
  return components.size === 0 || components.has(component);
}
