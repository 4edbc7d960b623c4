import { defineConfig } from 'vite';
import { pwa } from './pwa.config.ts';

export default defineConfig({
  plugins: [pwa()],
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  server: { port: 5173 },
  preview: { port: 4173 },
});
