// Which answers the git server (gitServer.ts) and the CORS proxy (gitProxy.ts) gzip on the wire: the ref
// lists, that is the info/refs advertisement and the answer to an ls-refs command, when the client accepts
// gzip. Pack answers (`command=fetch`, v0 upload-pack) never: a pack is deflated already, and gzipping it
// again costs server CPU for nothing. docs/decisions/compressed-ref-lists.md has the measurements.
// Web APIs only: the proxy's core runs on Node, Deno and workerd.

/**
 * Whether an `Accept-Encoding` header takes gzip (RFC 9110 12.5.3: listed, or `*`, with a q above 0).
 * Browsers always send one with gzip; so does the git CLI (curl's CURLOPT_ENCODING "").
 */
export function acceptsGzip(header: string | null | undefined): boolean {
  if (!header) return false;
  let star = false;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') return allowed;
    if (coding === '*') star = allowed;
  }
  return star;
}

const LS_REFS = new TextEncoder().encode('command=ls-refs');

/**
 * Whether a v2 request body opens with the ls-refs command (gitprotocol-v2: a request's first pkt-line is
 * `command=<name>`). `opening` is whatever of the body has arrived first; too short, or a gzipped body
 * (the caller passes none then), reads as "not ls-refs", which only leaves that answer uncompressed.
 */
export function opensWithLsRefs(opening: Uint8Array | undefined): boolean {
  if (!opening || opening.length < 4 + LS_REFS.length) return false;
  for (let i = 0; i < LS_REFS.length; i++) if (opening[4 + i] !== LS_REFS[i]) return false;
  return true;
}

/**
 * Whether the answer to this request is a ref list worth gzipping: every info/refs GET (the v2 capability
 * advertisement, or a v0 server's whole ref advertisement), and an upload-pack POST whose body opens with
 * `command=ls-refs`. `opening` is the POST body's first bytes, undefined when it came gzipped.
 */
export function isRefListRequest(method: string, path: string, opening: Uint8Array | undefined): boolean {
  if (method === 'GET') return path.endsWith('/info/refs');
  return method === 'POST' && path.endsWith('/git-upload-pack') && opensWithLsRefs(opening);
}
