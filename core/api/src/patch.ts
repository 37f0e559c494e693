// @skiff/api/patch: the four patch kinds the API server applies and server-side apply's field ownership.
export * from './patch/index.js';
export * from './managed-fields/index.js';
