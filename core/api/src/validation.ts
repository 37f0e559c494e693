// @skiff/api/validation: Kubernetes' field errors and the validation and defaulting rules several kinds share
// (metadata, names, selectors, pod specs and templates). A kind's own rules live with the kind.
export * from './validation/index.js';
export * from './defaults.js';
