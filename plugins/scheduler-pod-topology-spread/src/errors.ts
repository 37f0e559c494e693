import { codedError } from '@skiff/kernel';

/** Every PodTopologySpread error: a stable code and a message template (field errors read as upstream's). */
export const POD_TOPOLOGY_SPREAD_ERRORS = Object.freeze({
  SKIFF_ERR_POD_TOPOLOGY_SPREAD_ARGS: 'invalid PodTopologySpreadArgs: {detail}',
  SKIFF_ERR_POD_TOPOLOGY_SPREAD_NO_STATE: 'reading "{key}" from cycleState: not found (PreFilter did not run for this pod)',
  SKIFF_ERR_POD_TOPOLOGY_SPREAD_SELECTOR: "obtaining pod's {which} topology spread constraints: {detail}",
} as const);

export type PodTopologySpreadErrorCode = keyof typeof POD_TOPOLOGY_SPREAD_ERRORS;

export class PodTopologySpreadError extends codedError('PodTopologySpreadError', POD_TOPOLOGY_SPREAD_ERRORS) {}
