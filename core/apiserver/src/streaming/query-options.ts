import { errors } from '@skiff/api';

/**
 * A boolean option of PodLogOptions, PodExecOptions, PodAttachOptions: kube-apiserver's query conversion makes
 * only an absent parameter, "0" and "false" (any case) false; anything else, even an empty value, is true.
 */
export function optionBool(value: string | undefined): boolean {
  return value !== undefined && value !== '0' && value.toLowerCase() !== 'false';
}

/** An integer option (Go's strconv.ParseInt: an optional sign and decimal digits); 400 naming the parameter when malformed. */
export function optionInt(query: Record<string, string | undefined>, name: string): number | undefined {
  const raw = query[name];
  if (raw === undefined || raw === '') return undefined;
  const value = /^[+-]?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw errors.badRequest(`invalid value for query parameter ${name}: ${JSON.stringify(raw)} (expected a whole number)`);
  return value;
}

/** Every value of a query parameter that may repeat (`command=sh&command=-c`), in order. */
export function optionList(all: Record<string, string[]> | undefined, query: Record<string, string | undefined>, name: string): string[] {
  const values = all?.[name];
  if (values) return values;
  const single = query[name];
  return single === undefined ? [] : [single];
}
