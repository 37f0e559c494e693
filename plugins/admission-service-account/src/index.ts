import type { Pod, PodSpec, ServiceAccount } from '@skiff/api';
import { ADMISSION_STAGE, definePlugin, isAdmissionFor, packageInfo, type AdmissionRequest, type PluginOptions } from '@skiff/kernel';
import { ServiceAccountAdmissionError } from './errors.js';
import { findServiceAccount } from './lookup.js';
import { DEFAULT_SERVICE_ACCOUNT, ENFORCE_MOUNTABLE_SECRETS_ANNOTATION, MIRROR_POD_ANNOTATION, PLUGIN_NAME } from './names.js';
import { enforcesMountableSecrets, mirrorPodRefusal, unlistedEphemeralSecretReference, unlistedSecretReference, type Refusal } from './secret-references.js';
import { mountToken } from './token-volume.js';

/** The pod spec fields this plugin reads and fills in. */
type AccountSpec = PodSpec & {
  serviceAccountName?: string;
  serviceAccount?: string;
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: { name?: string }[];
};

const isMirrorPod = (pod: Pod) => pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;

/** The pod's own choice wins; then the account's; mounting is the default. */
const automounts = (spec: AccountSpec, account: ServiceAccount) => spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;

function refuse(request: AdmissionRequest, refusal: Refusal | undefined): void {
  if (refusal) throw new ServiceAccountAdmissionError(request, refusal.code, refusal.params);
}

/**
 * The ServiceAccount admission plugin: a new pod runs as a ServiceAccount that exists (`default` unless it names
 * one), gets the account's image pull secrets when it has none, and, unless the pod or the account opts out, a
 * projected volume with a bound API token, the cluster CA and its namespace, mounted in every container.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      mountToken: {
        type: 'boolean',
        default: true,
        description: 'Add the kube-api-access-* token volume and its mounts to pods whose automountServiceAccountToken allows it',
      },
      limitSecretReferences: {
        type: 'boolean',
        default: false,
        description:
          "Refuse pods that reference secrets their ServiceAccount does not list (otherwise only for accounts annotated kubernetes.io/enforce-mountable-secrets: 'true')",
      },
      defaultAccountWaitMs: {
        type: 'integer',
        minimum: 0,
        default: 1500,
        description: "How long a pod create waits for its namespace's default ServiceAccount to appear",
      },
    },
  },
  apply(kernel, options) {
    const requireServiceAccount = async (request: AdmissionRequest, name: string): Promise<ServiceAccount> => {
      const account = await findServiceAccount(request, name, options.defaultAccountWaitMs);
      if (!account) throw new ServiceAccountAdmissionError(request, 'SKIFF_ERR_SERVICE_ACCOUNT_NOT_FOUND', { namespace: request.namespace, name });
      return account;
    };
    const enforces = (account: ServiceAccount) => enforcesMountableSecrets(account, options.limitSecretReferences, ENFORCE_MOUNTABLE_SECRETS_ANNOTATION);

    kernel.hooks.mutate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.SERVICE_ACCOUNT }, async (request) => {
      if (!isAdmissionFor(request, 'pods') || request.operation !== 'CREATE' || !request.object) return;
      const pod = request.object;
      // The kubelet compares a mirror pod with its static manifest; a changed spec would make it delete the pod.
      if (isMirrorPod(pod)) return;
      const spec = (pod.spec ??= { containers: [] }) as AccountSpec;
      spec.serviceAccountName ||= DEFAULT_SERVICE_ACCOUNT;
      spec.serviceAccount = spec.serviceAccountName;
      const account = await requireServiceAccount(request, spec.serviceAccountName);
      if (options.mountToken && automounts(spec, account)) mountToken(spec);
      if (!spec.imagePullSecrets?.length && account.imagePullSecrets?.length)
        spec.imagePullSecrets = account.imagePullSecrets.map((secret) => ({ name: secret.name }));
    });

    kernel.hooks.validate.tapPromise({ name: PLUGIN_NAME, stage: ADMISSION_STAGE.SERVICE_ACCOUNT }, async (request) => {
      const pod = request.object as Pod | undefined;
      if (request.resource.group !== '' || request.resource.resource !== 'pods' || !pod) return;
      const spec = (pod.spec ?? { containers: [] }) as AccountSpec;
      if (request.operation === 'UPDATE' && request.subresource === 'ephemeralcontainers') {
        if (!spec.serviceAccountName) return;
        const account = await requireServiceAccount(request, spec.serviceAccountName);
        if (enforces(account)) refuse(request, unlistedEphemeralSecretReference(spec, account));
        return;
      }
      if (request.operation !== 'CREATE' || request.subresource) return;
      if (isMirrorPod(pod)) return refuse(request, mirrorPodRefusal(spec));
      const account = await requireServiceAccount(request, spec.serviceAccountName ?? '');
      if (enforces(account)) refuse(request, unlistedSecretReference(spec, account));
    });
  },
});
export default plugin;

export type ServiceAccountAdmissionOptions = PluginOptions<typeof plugin>;

export { ENFORCE_MOUNTABLE_SECRETS_ANNOTATION, PLUGIN_NAME } from './names.js';
