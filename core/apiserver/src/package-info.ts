import { packageInfo } from '@skiff/kernel';

/** This package's name, version and kernel range, from its package.json (the plugin's metadata and `/version` use them). */
export const APISERVER_PACKAGE = packageInfo(new URL('../package.json', import.meta.url));
