// Semantic validation of the built-in kinds, returning Kubernetes' field errors as StatusCauses.
export * from './validation/index.js';
