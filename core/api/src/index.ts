// @skiff/api: the object model — every kind's type and coordinates, API errors, selectors, quantities,
// defineKind. Validation, patches, protobuf and schemas have their own entries: @skiff/api/validation,
// @skiff/api/patch, @skiff/api/protobuf, @skiff/api/schema.
export * from './types.js';
export * from './errors.js';
export * from './guards.js';
export * from './resource.js';
export * from './labels.js';
export * from './admission-matching.js';
export * from './fields.js';
export * from './quantity.js';
export * from './duration.js';
export * from './limits.js';
export * from './downward-api.js';
export * from './ipv4.js';
export * from './pod-state.js';
export * from './tolerations.js';
export * from './int-or-percent.js';
export * from './cron.js';
export * from './string-maps.js';
export * from './service-endpoints.js';
export * from './freeze.js';
export * from './kinds/index.js';
export * from './node-affinity.js';
