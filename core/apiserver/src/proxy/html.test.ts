import { describe, expect, it } from 'vitest';
import { rewriteHtml } from './html.js';

const prefixed = (url: string) => (url.startsWith('/') ? `/proxy${url}` : url);

describe('rewriteHtml', () => {
  it('rewrites URL attributes of the elements kube-apiserver rewrites, and nothing else', () => {
    expect(rewriteHtml('<a href="/x">x</a><p title="/x">/x</p>', prefixed)).toBe('<a href="/proxy/x">x</a><p title="/x">/x</p>');
    expect(rewriteHtml("<FORM ACTION='/post' method=post><img src=/i.png usemap=/m>", prefixed)).toBe(
      '<form action="/proxy/post" method="post"><img src="/proxy/i.png" usemap="/proxy/m">',
    );
  });

  it('leaves comments, doctype, end tags and raw-text content alone', () => {
    const page = '<!doctype html><!-- <a href="/c"> --><style>a[href="/s"]{}</style><script src="/s.js">if (a<b) x = "<a href=/y>"</script></div>';
    expect(rewriteHtml(page, prefixed)).toBe(
      '<!doctype html><!-- <a href="/c"> --><style>a[href="/s"]{}</style><script src="/proxy/s.js">if (a<b) x = "<a href=/y>"</script></div>',
    );
  });

  it('decodes and escapes attribute values as Go does, and keeps a stray < and an unfinished tag', () => {
    expect(rewriteHtml('<a href="/a?x=1&amp;y=&quot;2&quot;" data-x>', prefixed)).toBe('<a href="/proxy/a?x=1&amp;y=&#34;2&#34;" data-x="">');
    expect(rewriteHtml('1 < 2 <a href="/x"', prefixed)).toBe('1 < 2 <a href="/x"');
  });
});
