import { codedError } from '@skiff/kernel';

/**
 * Every error of the HorizontalPodAutoscaler controller: why a metric or a target could not be read. The
 * messages end up in the autoscaler's conditions and Warning events, worded as upstream's.
 */
export const HPA_ERRORS = Object.freeze({
  SKIFF_ERR_HPA_UNKNOWN_TARGET: 'unable to determine resource for scale target reference: no kind "{kind}" is served in "{apiVersion}"',
  SKIFF_ERR_HPA_NO_PODS: 'no pods returned by selector while calculating replica count',
  SKIFF_ERR_HPA_MISSING_REQUEST: 'missing request for {resource} in container {container} of Pod {pod}',
  SKIFF_ERR_HPA_NO_METRICS: 'unable to get metrics for resource {resource}: no metrics returned from resource metrics API',
  SKIFF_ERR_HPA_METRICS_API: 'unable to get metrics for resource {resource}: unable to fetch metrics from resource metrics API: {detail}',
  SKIFF_ERR_HPA_NO_READY_METRICS: 'did not receive metrics for targeted pods (pods might be unready)',
  SKIFF_ERR_HPA_NO_MATCHING_METRICS: 'no metrics returned matched known pods',
  SKIFF_ERR_HPA_UNSUPPORTED_METRIC: 'unable to get {type} metric: {api} is not served by this cluster',
  SKIFF_ERR_HPA_INVALID_TARGET: 'invalid {type} metric target: {detail}',
} as const);

export type HpaErrorCode = keyof typeof HPA_ERRORS;

export class HpaError extends codedError('HpaError', HPA_ERRORS) {}
