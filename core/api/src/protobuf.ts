// @skiff/api/protobuf: Kubernetes' protobuf wire format for every kind the API facts describe.
export * from './protobuf/index.js';
