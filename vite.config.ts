import { defineConfig } from 'vite';
import { pwa } from './pwa.config.ts';

export default defineConfig({
  plugins: [pwa()],
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    sourcemap: true,
    // The app, and the widget (its own entry: small, reads only, its own worker).
    rollupOptions: { input: { index: 'index.html', embed: 'embed.html' } },
  },
  server: { port: 5173 },
  preview: { port: 4173 },
});
