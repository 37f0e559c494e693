import { RESOURCES, type Pod } from '@skiff/api';
import { definePlugin, packageInfo, type ControllerContext, type PluginOptions } from '@skiff/kernel';

/** The npm package name: cluster configs name the plugin by it, and its hook tap carries it. */
export const PLUGIN_NAME = '{{package}}';

/** The control loop's name: the controller manager's `enabled` option lists it, and events name it as their source. */
export const CONTROLLER_NAME = '{{name}}';

/** The reason of the Warning event; `kubectl get events --field-selector reason=UnpinnedImage` finds them. */
export const EVENT_REASON = 'UnpinnedImage';

/**
 * A controller: it watches pods and records a Warning event on each pod that runs an image by a tag that
 * can move (`latest`, or no tag at all), so `kubectl describe pod` shows it. It only reads pods and
 * writes events; its informer is shared with every other controller that watches pods.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      tags: { type: 'array', items: { type: 'string' }, default: ['latest'], description: 'image tags that count as unpinned' },
    },
  },
  apply(kernel, options) {
    kernel.hooks.controllers.tap(PLUGIN_NAME, (registry) => {
      registry.register({ name: CONTROLLER_NAME, start: (ctx) => startController(ctx, options) });
    });
  },
});

export default plugin;

/** The options `apply` receives, with defaults filled in. */
export type UnpinnedImageOptions = PluginOptions<typeof plugin>;

/**
 * The tag of an image reference: `undefined` when pinned by digest, `latest` when it names none.
 * A colon before the last slash belongs to a registry port (`registry:5000/web`), not a tag.
 */
export function imageTag(image: string): string | undefined {
  if (image.includes('@')) return undefined;
  const colon = image.indexOf(':', image.lastIndexOf('/') + 1);
  return colon < 0 ? 'latest' : image.slice(colon + 1);
}

/** Registers the informer handlers; the controller manager starts the shared informers afterwards. */
function startController(ctx: ControllerContext, { tags }: UnpinnedImageOptions): void {
  const unpinned = new Set(tags);
  // Each pod is warned about once (by uid), not on every status update.
  const warned = new Set<string>();
  const check = (pod: Pod) => {
    const uid = pod.metadata.uid;
    if (!uid || warned.has(uid)) return;
    const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
    const offending = containers.filter((container) => {
      const tag = container.image === undefined ? undefined : imageTag(container.image);
      return tag !== undefined && unpinned.has(tag);
    });
    if (offending.length === 0) return;
    warned.add(uid);
    const list = offending.map((container) => `"${container.name}" (${container.image})`).join(', ');
    ctx.recorder.event(pod, 'Warning', EVENT_REASON, `container(s) ${list} use an image tag that can move; pin a version or a digest`);
  };
  ctx.informers.informer<Pod>(RESOURCES.pods).addHandlers({
    add: check,
    update: (_old, pod) => check(pod),
    delete: (pod) => void warned.delete(pod.metadata.uid ?? ''),
  });
}
