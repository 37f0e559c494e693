import { resolve } from 'node:path';
import { createLoopbackClient } from '@skiff/client';
import { controllerPlugin } from '@skiff/controller-manager';
import { ADMISSION_STAGE, packageInfo, type ApiClient, type PluginOptions } from '@skiff/kernel';
import type { StorageClass, UserInfo } from '@skiff/api';
import { admitStorage } from './admission.js';
import { PersistentVolumeBinder } from './controller.js';
import { HostDirectories } from './host-directories.js';
import { CONTROLLER_NAME, DEFAULT_STORAGE_CLASS_NAME, PLUGIN_NAME, PROVISIONER, STORAGE_CLASSES } from './names.js';
import { defaultClassObject, ensureStorageClass } from './storage-class.js';

/** The identity the admission step reads StorageClasses as (the API server's own, as for its other bookkeeping reads). */
const APISERVER_USER: UserInfo = Object.freeze({
  username: 'system:apiserver',
  uid: 'system:apiserver',
  groups: ['system:masters', 'system:authenticated'],
});

/** Local volumes: a default StorageClass, PersistentVolumes provisioned as host directories, and claims bound to them. */
const plugin = controllerPlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  needs: ['apiHandler'],
  workers: 'Claims and volumes synced at once',
  options: {
    storageClassName: {
      type: 'string',
      minLength: 1,
      default: DEFAULT_STORAGE_CLASS_NAME,
      description: 'Name of the default StorageClass created at start',
    },
    createStorageClass: { type: 'boolean', default: true, description: 'Create the default StorageClass at start unless one of that name exists' },
    volumesDir: {
      type: 'string',
      minLength: 1,
      default: 'volumes',
      description: 'Folder holding one directory per provisioned volume; relative to the data dir',
    },
    defaultStorageClassAdmission: {
      type: 'boolean',
      default: true,
      description: 'Give claims created without storageClassName the default class (the DefaultStorageClass admission plugin)',
    },
    protection: {
      type: 'boolean',
      default: true,
      description: 'Put kubernetes.io/pvc-protection and kubernetes.io/pv-protection on new claims and volumes (StorageObjectInUseProtection)',
    },
  },
  controllers: (options, kernel) => ({
    [CONTROLLER_NAME]: async (ctx) => {
      if (options.createStorageClass && (await ensureStorageClass(ctx.client, defaultClassObject(options.storageClassName, PROVISIONER)))) {
        ctx.logger.info({ storageClass: options.storageClassName }, 'created the default StorageClass');
      }
      const directories = new HostDirectories(resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir, options.volumesDir));
      return new PersistentVolumeBinder(ctx, { provisioner: PROVISIONER, directories });
    },
  }),
  apply(kernel, options) {
    let loopback: ApiClient | undefined;
    const listStorageClasses = async (): Promise<StorageClass[]> => {
      loopback ??= createLoopbackClient(kernel.resolve('apiHandler'), APISERVER_USER);
      return (await loopback.list<StorageClass>(STORAGE_CLASSES)).items;
    };
    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.DEFAULTS }, async (request) => {
      await admitStorage(request, {
        listStorageClasses: options.defaultStorageClassAdmission ? listStorageClasses : async () => [],
        protection: options.protection,
      });
    });
  },
});
export default plugin;

export type StorageHostPathOptions = PluginOptions<typeof plugin>;

export { CONTROLLER_NAME, PLUGIN_NAME, PROVISIONER } from './names.js';
