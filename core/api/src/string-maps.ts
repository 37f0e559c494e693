/** Whether two string maps (labels, annotations, parameters) hold the same keys with the same values; an absent map is an empty one. */
export function sameStringMap(a: Readonly<Record<string, string>> | null | undefined, b: Readonly<Record<string, string>> | null | undefined): boolean {
  const left = Object.entries(a ?? {});
  return left.length === Object.keys(b ?? {}).length && left.every(([key, value]) => b?.[key] === value);
}
