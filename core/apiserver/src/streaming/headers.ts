/** Whether a comma-separated header (Connection) lists `token`, compared case-insensitively. */
export function hasToken(header: string | undefined, token: string): boolean {
  return headerList(header).some((part) => part.toLowerCase() === token);
}

/** The values of a comma-separated header; repeated header lines arrive joined with ', '. */
export function headerList(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

/** A request that asks to switch protocols: `Connection: Upgrade` with an `Upgrade` header (as Node's HTTP parser decides). */
export function isUpgradeRequest(headers: Record<string, string | undefined>): boolean {
  return Boolean(headers.upgrade?.trim()) && hasToken(headers.connection, 'upgrade');
}
