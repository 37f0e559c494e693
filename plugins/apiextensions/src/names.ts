export const PLUGIN_NAME = '@skiff/plugin-apiextensions';

/** The finalizer a CRD carries until every custom resource it defines is deleted. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** Where the API server stores CRDs. */
export const CRD_PREFIX = '/registry/apiextensions.k8s.io/customresourcedefinitions/';

/** Who the plugin's own writes (CRD status, finalizer, cleanup) come from. */
export const APIEXTENSIONS_USER = Object.freeze({
  username: 'system:apiextensions',
  uid: 'system:apiextensions',
  groups: ['system:masters', 'system:authenticated'],
});
