// Duplicate fields in a JSON body (`{"replicas":1,"replicas":2}`): JSON.parse keeps the last one silently;
// Kubernetes' strict decoding names each repeated field, as an error (Strict) or a warning (Warn). One
// linear scan, no recursion.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

interface Frame {
  keys?: Set<string>;
}

/** The names of fields repeated within one JSON object, in order of their second appearance. */
export function duplicateJsonFields(text: string): string[] {
  const out: string[] = [];
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i + 1;
      let escaped = false;
      for (i = start; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) {
          escaped = true;
          i++;
        } else if (d === QUOTE) break;
      }
      const frame = stack[stack.length - 1];
      if (!frame?.keys) continue;
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) <= 0x20) j++;
      if (text.charCodeAt(j) !== COLON) continue;
      const raw = text.slice(start, i);
      const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
      if (frame.keys.has(key)) out.push(key);
      else frame.keys.add(key);
    } else if (c === OPEN_BRACE) stack.push({ keys: new Set() });
    else if (c === OPEN_BRACKET) stack.push({});
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop();
  }
  return out;
}
