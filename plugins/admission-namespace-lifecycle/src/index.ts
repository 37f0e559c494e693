import { errors, type Namespace } from '@skiff/api';
import { ADMISSION_STAGE, AdmissionError, definePlugin, packageInfo, type PluginOptions } from '@skiff/kernel';

export const PLUGIN_NAME = '@skiff/plugin-admission-namespace-lifecycle';

/**
 * The NamespaceLifecycle admission plugin: objects cannot be created in a namespace that does not exist
 * or is being terminated, and the system namespaces cannot be deleted.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      immortalNamespaces: {
        type: 'array',
        items: { type: 'string' },
        default: ['default', 'kube-system', 'kube-public'],
        description: 'Namespaces that cannot be deleted',
      },
    },
  },
  apply(kernel, options) {
    const immortal = new Set(options.immortalNamespaces);

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.NAMESPACE }, async (request) => {
      const isNamespace = request.resource.group === '' && request.resource.resource === 'namespaces';
      if (isNamespace) {
        if (request.operation === 'DELETE' && immortal.has(request.name))
          throw new AdmissionError(`namespaces "${request.name}" is forbidden: this namespace may not be deleted`);
        return;
      }
      if (request.operation !== 'CREATE' || !request.namespace) return;
      const namespace = (await request.get({ group: '', resource: 'namespaces' }, '', request.namespace)) as Namespace | undefined;
      if (!namespace) {
        const notFound = errors.notFound('namespaces', '', request.namespace);
        throw new AdmissionError(notFound.message, 404);
      }
      // Subresource creates (bindings, evictions) act on objects that already exist; they may proceed.
      if (namespace.status?.phase === 'Terminating' && !request.subresource)
        throw new AdmissionError(
          `${request.resource.resource} "${request.name}" is forbidden: unable to create new content in namespace ${request.namespace} because it is being terminated`,
        );
    });
  },
});
export default plugin;

export type NamespaceLifecycleOptions = PluginOptions<typeof plugin>;
