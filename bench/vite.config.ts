import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The bench page: its own entry, built apart from the app into .cache/bench-page/, which git and Biome
 * ignore as they do the fixtures.
 */
export default defineConfig({
  root: fileURLToPath(new URL('./page', import.meta.url)),
  base: './',
  logLevel: 'warn',
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    outDir: fileURLToPath(new URL('../.cache/bench-page', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
  },
});
