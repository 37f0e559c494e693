export const PLUGIN_NAME = '@skiff/plugin-aggregator';

/** The front proxy's client certificate names this user; aggregated API servers accept only it (requestheader-allowed-names). */
export const FRONT_PROXY_USER = 'front-proxy-client';

/** The identity the availability check sends to a backend (as kube-aggregator does). */
export const DISCOVERY_CHECK_USER = Object.freeze({ username: 'system:kube-aggregator', groups: ['system:masters'] });

/** The API server's own loopback identity, which the aggregator acts as. */
export const AGGREGATOR_CLIENT_USER = Object.freeze({ username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] });
