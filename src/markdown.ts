// Markdown to safe HTML. marked and DOMPurify are loaded on first use, so pages that show no Markdown do
// not pay for them.

let loading: Promise<(text: string) => string> | null = null;

function load(): Promise<(text: string) => string> {
  loading ??= Promise.all([import('marked'), import('dompurify')]).then(
    ([{ marked }, { default: purify }]) => {
      return (text: string) => {
        const html = marked.parse(text, { async: false, gfm: true }) as string;
        // Repository content is untrusted: no scripts, handlers, forms, frames or inline styles (the page's
        // CSP forbids them anyway); links open outside the page.
        const clean = purify.sanitize(html, {
          FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe', 'object', 'embed'],
          FORBID_ATTR: ['style'],
        });
        const doc = new DOMParser().parseFromString(`<body>${clean}</body>`, 'text/html');
        for (const a of doc.querySelectorAll('a[href]')) {
          a.setAttribute('target', '_blank');
          a.setAttribute('rel', 'noopener noreferrer');
        }
        return doc.body.innerHTML;
      };
    },
  );
  return loading;
}

/** Renders Markdown to HTML with everything that could run code removed. */
export async function renderMarkdown(text: string): Promise<string> {
  return (await load())(text);
}

export function isMarkdown(path: string): boolean {
  return /\.(md|markdown|mdown|mkd)$/i.test(path);
}
