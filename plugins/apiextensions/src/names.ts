export const PLUGIN_NAME = '@skiff/plugin-apiextensions';

/** The finalizer a CRD carries until every custom resource it defines is deleted. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** Where the API server stores CRDs. */
export const CRD_PREFIX = '/registry/apiextensions.k8s.io/customresourcedefinitions/';

export const CRD_TYPE = Object.freeze({
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  namespaced: false,
});

/** Who the plugin's own writes (CRD status, finalizer, cleanup) come from. */
export const APIEXTENSIONS_USER = Object.freeze({
  username: 'system:apiextensions',
  uid: 'system:apiextensions',
  groups: ['system:masters', 'system:authenticated'],
});
