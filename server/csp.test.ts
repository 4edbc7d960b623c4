import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from './csp.ts';

const root = join(import.meta.dirname, '..');

function metaPolicy(file: string): string | undefined {
  const html = readFileSync(join(root, file), 'utf8');
  return /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(html)?.[1];
}

describe('the Content-Security-Policy', () => {
  it("every page's meta is the policy server/csp.ts makes, without frame-ancestors", () => {
    // index.html, and any other entry page (the widget's embed.html) must carry it too.
    const pages = readdirSync(root).filter((f) => f.endsWith('.html'));
    expect(pages).toContain('index.html');
    for (const page of pages) expect(metaPolicy(page), page).toBe(contentSecurityPolicy());
  });

  it('names the configured hosts exactly in the header, and who may frame the page', () => {
    const app = contentSecurityPolicy({
      connect: ['http://127.0.0.1:8081', 'https://proxy.example'],
      frameAncestors: "'none'",
    });
    expect(app).toContain("connect-src 'self' https: http://127.0.0.1:8081 https://proxy.example;");
    expect(app).not.toContain('localhost:*');
    expect(app.endsWith("frame-ancestors 'none'")).toBe(true);
    expect(contentSecurityPolicy({ frameAncestors: '*' }).endsWith('frame-ancestors *')).toBe(true);
  });

  it('allows no inline script, no plugin, no base URL, and WebAssembly only by wasm-unsafe-eval', () => {
    const directives = new Map(
      contentSecurityPolicy()
        .split('; ')
        .map((d) => [d.slice(0, d.indexOf(' ')), d.slice(d.indexOf(' ') + 1)]),
    );
    expect(directives.get('script-src')).toBe("'self' 'wasm-unsafe-eval'");
    expect(directives.get('style-src')).toBe("'self'");
    expect(directives.get('object-src')).toBe("'none'");
    expect(directives.get('base-uri')).toBe("'none'");
    expect(directives.get('worker-src')).toBe("'self'");
    expect(directives.get('manifest-src')).toBe("'self'");
    const sources = [...directives.values()].flatMap((v) => v.split(' '));
    for (const bad of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'http:'])
      expect(sources).not.toContain(bad);
  });
});
