import { controllerPlugin } from '@skiff/controller-manager';
import { packageInfo, type PluginOptions } from '@skiff/kernel';
import { NamespaceController } from './controller.js';
import { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';

/** The namespace controller: empties a namespace being deleted, then removes its `kubernetes` finalizer. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['resourceRegistry'],
  workers: 'Namespaces worked on at once',
  controllers: (_options, kernel) => ({
    // The API server's registry, asked at every pass, says which kinds a namespace can hold.
    [CONTROLLER_NAME]: (ctx) => new NamespaceController(ctx, kernel.resolve('resourceRegistry')),
  }),
});
export default plugin;

export type NamespaceControllerOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME } from './names.js';
