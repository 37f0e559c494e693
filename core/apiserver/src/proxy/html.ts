/** The attributes holding URLs, per element, that kube-apiserver's proxy rewrites in HTML answers. */
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  a: ['href'],
  applet: ['codebase'],
  area: ['href'],
  audio: ['src'],
  base: ['href'],
  blockquote: ['cite'],
  body: ['background'],
  button: ['formaction'],
  command: ['icon'],
  del: ['cite'],
  embed: ['src'],
  form: ['action'],
  frame: ['longdesc', 'src'],
  head: ['profile'],
  html: ['manifest'],
  iframe: ['longdesc', 'src'],
  img: ['longdesc', 'src', 'usemap'],
  input: ['src', 'usemap', 'formaction'],
  ins: ['cite'],
  link: ['href'],
  object: ['classid', 'codebase', 'data', 'usemap'],
  q: ['cite'],
  script: ['src'],
  source: ['src'],
  video: ['poster', 'src'],
});

/** Elements whose content is text, not markup: tags inside them are not tags. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescapeValue(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return ENTITIES[name.toLowerCase()] ?? entity;
  });
}

/** Escapes an attribute value as Go's html.EscapeString does. */
function escapeValue(value: string): string {
  return value.replace(/[&'<>"\r]/g, (char) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;', '\r': '&#13;' })[char]!);
}

interface Attribute {
  name: string;
  value: string | undefined;
}

/**
 * Rewrites the URLs in an HTML document's URL attributes (an `<a href>`, an `<img src>`…) with `rewrite`, as
 * kube-apiserver's proxy does for text/html answers. A tag with such an attribute is written anew (lower-case
 * names, double-quoted escaped values); everything else is kept byte for byte, and the content of script,
 * style and the other raw-text elements is never read as markup.
 */
export function rewriteHtml(html: string, rewrite: (url: string) => string): string {
  let out = '';
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf('<', at);
    if (open < 0) break;
    out += html.slice(at, open);
    const skipTo = (marker: string, from: number) => {
      const end = html.indexOf(marker, from);
      return end < 0 ? html.length : end + marker.length;
    };
    let end: number;
    if (html.startsWith('<!--', open)) end = skipTo('-->', open + 4);
    else if (html[open + 1] === '!' || html[open + 1] === '?' || html[open + 1] === '/') end = skipTo('>', open + 1);
    else if (/[a-zA-Z]/.test(html[open + 1] ?? '')) {
      const tag = parseTag(html, open);
      if (!tag) {
        out += html.slice(open);
        at = html.length;
        break;
      }
      const urlAttributes = URL_ATTRIBUTES[tag.name];
      out +=
        urlAttributes && tag.attributes.some((attribute) => urlAttributes.includes(attribute.name))
          ? serialize(tag, urlAttributes, rewrite)
          : html.slice(open, tag.end);
      at = tag.end;
      if (RAW_TEXT.has(tag.name) && !tag.selfClosing) {
        const close = html.toLowerCase().indexOf(`</${tag.name}`, at);
        const stop = close < 0 ? html.length : close;
        out += html.slice(at, stop);
        at = stop;
      }
      continue;
    } else {
      out += '<';
      at = open + 1;
      continue;
    }
    out += html.slice(open, end);
    at = end;
  }
  return out + html.slice(at);
}

function parseTag(html: string, open: number): { name: string; attributes: Attribute[]; selfClosing: boolean; end: number } | undefined {
  const nameMatch = /^[a-zA-Z][^\s/>]*/.exec(html.slice(open + 1, open + 256));
  if (!nameMatch) return undefined;
  let at = open + 1 + nameMatch[0].length;
  const attributes: Attribute[] = [];
  const attribute = /\s*([^\s"'>/=][^\s"'>/=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/y;
  for (;;) {
    while (/\s/.test(html[at] ?? '')) at++;
    if (at >= html.length) return undefined;
    if (html[at] === '>') return { name: nameMatch[0].toLowerCase(), attributes, selfClosing: false, end: at + 1 };
    if (html.startsWith('/>', at)) return { name: nameMatch[0].toLowerCase(), attributes, selfClosing: true, end: at + 2 };
    if (html[at] === '/') {
      at++;
      continue;
    }
    attribute.lastIndex = at;
    const match = attribute.exec(html);
    if (!match) return undefined;
    const raw = match[2] ?? match[3] ?? match[4];
    attributes.push({ name: match[1]!.toLowerCase(), value: raw === undefined ? undefined : unescapeValue(raw) });
    at = attribute.lastIndex;
  }
}

function serialize(
  tag: { name: string; attributes: Attribute[]; selfClosing: boolean },
  urlAttributes: readonly string[],
  rewrite: (url: string) => string,
): string {
  const attributes = tag.attributes.map(({ name, value }) => {
    const text = value !== undefined && urlAttributes.includes(name) ? rewrite(value) : (value ?? '');
    return ` ${name}="${escapeValue(text)}"`;
  });
  return `<${tag.name}${attributes.join('')}${tag.selfClosing ? '/' : ''}>`;
}
