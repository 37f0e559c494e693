import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorMessage } from '@skiff/api';
import type { Kernel } from '@skiff/kernel';
import { RootCaPublisherError } from './errors.js';

/**
 * The PEM to publish: the file `caFile` names (relative to the data dir), or else the CA of the API server
 * in this process (its `apiServerInfo`). Checked to hold at least one certificate, so a wrong file fails
 * the controller's start instead of spreading into every namespace.
 */
export function clusterCaPem(kernel: Kernel, caFile: string | undefined): string {
  let pem: string;
  if (caFile) {
    const path = resolve(kernel.config.rootDir ?? process.cwd(), kernel.config.dataDir, caFile);
    try {
      pem = readFileSync(path, 'utf8');
    } catch (err) {
      throw new RootCaPublisherError('SKIFF_ERR_ROOT_CA_PUBLISHER_NO_CA', { detail: `cannot read ${path}: ${errorMessage(err)}` }, { cause: err });
    }
  } else if (kernel.hasComponent('apiServerInfo')) {
    pem = kernel.resolve('apiServerInfo').caPem;
  } else {
    throw new RootCaPublisherError('SKIFF_ERR_ROOT_CA_PUBLISHER_NO_CA', {
      detail: 'no API server runs in this process; set the option caFile to the cluster CA certificate (PEM)',
    });
  }
  try {
    new X509Certificate(pem);
  } catch (err) {
    throw new RootCaPublisherError('SKIFF_ERR_ROOT_CA_PUBLISHER_NO_CA', { detail: `not a PEM certificate (${errorMessage(err)})` }, { cause: err });
  }
  return pem;
}
