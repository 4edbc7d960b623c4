/**
 * The app's Content-Security-Policy, one source for the `<meta http-equiv>` in index.html (checked equal
 * by a test) and the header server/start.ts sends. docs/ARCHITECTURE.md "Content-Security-Policy" says why
 * each source is there.
 */
export interface CspOptions {
  /**
   * Extra `connect-src` sources: the git server and CORS proxy a deployment configures (the header lists
   * them exactly; the meta, which is static, allows any port on localhost instead).
   */
  connect?: string[];
  /**
   * `frame-ancestors`, header only (a meta policy cannot carry it). `'none'` for the app; the widget's
   * embed.html is made to be framed by any site, so it gets `*`.
   */
  frameAncestors?: "'none'" | '*';
}

/** Local git servers and proxies (`npm start`, `npm run serve:git`, `npm run serve:proxy`) speak plain http. */
export const LOCAL_HTTP = ['http://localhost:*', 'http://127.0.0.1:*'];

export function contentSecurityPolicy(opts: CspOptions = {}): string {
  const directives: [string, string[]][] = [
    ['default-src', ["'self'"]],
    // hash-wasm instantiates WebAssembly (SHA-1 in the git worker); no eval, no inline script.
    ['script-src', ["'self'", "'wasm-unsafe-eval'"]],
    // Preact sets `style={…}` through the CSSOM, which style-src does not govern: no 'unsafe-inline'.
    ['style-src', ["'self'"]],
    // blob: for repository images (previews, a README's relative images), shown through <img> only and
    // revoked once loaded; https: for a README's absolute images (badges), which cannot run script either.
    ['img-src', ["'self'", 'blob:', 'https:']],
    ['connect-src', ["'self'", 'https:', ...(opts.connect ?? LOCAL_HTTP)]],
    ['worker-src', ["'self'"]],
    ['manifest-src', ["'self'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'none'"]],
    ['form-action', ["'self'"]],
  ];
  if (opts.frameAncestors) directives.push(['frame-ancestors', [opts.frameAncestors]]);
  return directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}
