import type { UserInfo } from '@skiff/api';

/**
 * Parses a Kubernetes static token file: one CSV line per token,
 * `token,user,uid[,"group1,group2"]`; blank lines and `#` comments are skipped.
 */
export function parseTokenFile(text: string, file: string): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const fields = splitCsvLine(line);
    const [token, username, uid, groups] = fields;
    if (!token || !username || fields.length < 3) throw new Error(`${file}:${index + 1}: expected token,user,uid[,"groups"] (got ${fields.length} fields)`);
    if (tokens.has(token)) throw new Error(`${file}:${index + 1}: duplicate token for user "${username}"`);
    tokens.set(token, {
      username,
      uid: uid || undefined,
      groups: groups
        ? groups
            .split(',')
            .map((g) => g.trim())
            .filter(Boolean)
        : [],
    });
  });
  return tokens;
}

function splitCsvLine(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        current += '"';
        i++;
      } else if (c === '"') quoted = false;
      else current += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(current.trim());
      current = '';
    } else current += c;
  }
  fields.push(current.trim());
  return fields;
}

export function formatTokenLine(token: string, user: UserInfo): string {
  return `${token},${user.username},${user.uid ?? ''},"${user.groups.join(',')}"`;
}
