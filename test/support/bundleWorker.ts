import { build } from 'esbuild';

/**
 * A Worker's TypeScript entry as the one ES module workerd runs (what wrangler's own bundling makes of
 * `main`), for miniflare.
 */
export async function bundleWorker(entry: string): Promise<string> {
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
  });
  return bundle.outputFiles[0].text;
}
