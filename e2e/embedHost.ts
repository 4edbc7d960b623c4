import { createServer, type Server } from 'node:http';

/**
 * A page on another origin, as a site embedding the widget would be: `/host.html?src=<widget URL>` frames
 * the widget, records every message it gets in `window.received`, and offers `sendToWidget(message)`.
 * `/plain.html` is an empty page, framed beside the widget to play a third origin. `/snippet.html?html=`
 * is a page with the given snippet pasted in, as someone's blog post would be.
 */
const HOST_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Embedding page</title>
<style>body{font-family:sans-serif;margin:16px;background:#eee} iframe{border:0;width:720px;display:block}</style>
</head><body>
<h1>A page that embeds Blobless</h1>
<iframe id="widget" title="Blobless widget" allow="clipboard-write"></iframe>
<iframe id="third" title="A third origin" height="40"></iframe>
<script>
  const params = new URLSearchParams(location.search);
  const src = params.get('src');
  const widgetOrigin = new URL(src).origin;
  window.received = [];
  window.addEventListener('message', (e) => {
    if (e.origin !== widgetOrigin || e.data?.source !== 'blobless-embed') return;
    window.received.push(e.data);
    if (e.data.type === 'resize') document.getElementById('widget').style.height = e.data.height + 'px';
  });
  window.sendToWidget = (message) => document.getElementById('widget').contentWindow.postMessage(message, widgetOrigin);
  document.getElementById('widget').src = src;
  if (params.get('third')) document.getElementById('third').src = params.get('third');
</script>
</body></html>`;

export interface PageServer {
  origin: string;
  close(): Promise<void>;
}

export async function startEmbedHost(port: number): Promise<PageServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/host.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(HOST_PAGE);
    } else if (path === '/snippet.html') {
      // The app's Embed snippet pasted as is into a page (with a light background, and dark text below it).
      const snippet = new URL(req.url ?? '/', 'http://x').searchParams.get('html') ?? '';
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><head><meta charset="utf-8"><title>A post</title><style>body{margin:16px;background:#f3f4f6}</style></head><body><p>Above.</p>${snippet}<p id="below">Below.</p></body></html>`,
      );
    } else if (path === '/plain.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Third origin</title><p>third origin</p>');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
